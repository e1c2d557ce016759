import { afterEach, describe, expect, it } from 'vitest';
import { contextViewSchema } from '../../src/chat/index.js';
import { summaryBound } from '../../src/workflows/core/effects/index.js';
import { Harness } from '../helpers/harness.js';
import { limitedModel } from '../helpers/limited-model.js';

/**
 * The context-limit test's local OpenAI-compatible server (three characters a token), whose model answers a
 * summary request with `summaryChars` characters: the labels it saw, then filler.
 */
function verboseSummariser(options: { limit: number; results: number; summaryChars: number }) {
  return limitedModel({
    limit: options.limit,
    charsPerToken: 3,
    results: options.results,
    size: 3000,
    summaryFiller: options.summaryChars,
  });
}

/** The context views stored under the test's prefix (one per chat that has one). */
async function storedViews(harness: Harness): Promise<string[]> {
  const [, keys] = await harness.redis.scan('0', 'MATCH', `${harness.prefix}:*:view`, 'COUNT', 10_000);
  const views: string[] = [];
  for (const key of keys) views.push((await harness.redis.get(key)) as string);
  return views;
}

let harness: Harness | undefined;
let model: Awaited<ReturnType<typeof verboseSummariser>> | undefined;
afterEach(async () => {
  await harness?.close();
  await model?.close();
  harness = undefined;
  model = undefined;
});

describe('a summary is bounded', () => {
  it('a model that answers the summary request with 3 MB of text: the stored view stays within a quarter of the window, and the session goes on', async () => {
    model = await verboseSummariser({ limit: 8000, results: 12, summaryChars: 3_000_000 });
    harness = new Harness({
      providerEntry: {
        name: 'model',
        kind: 'openai_compatible',
        model: 'local-model',
        base_url: model.baseUrl,
        context_window: 8000,
        // The reply limit allows the 3 MB answer: the summary's own bound must hold it.
        max_reply_chars: 4_000_000,
      },
      maxIterations: 100,
      agent: { options: { max_iterations: 100 } },
    });
    await harness.startWorker();
    const first = await harness.engine.startRun({ input: 'fetch every result' });
    const run = await harness.engine.waitForRun(first.runId, { timeoutMs: 120_000 });
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    expect(model.requests.some((request) => request.summary)).toBe(true);

    const views = (await storedViews(harness)).map((json) => contextViewSchema.parse(JSON.parse(json)));
    expect(views).toHaveLength(1);
    const summary = views[0]?.summary;
    expect(summary?.text.length).toBeLessThanOrEqual(summaryBound(8000));
    expect(summary?.text).toMatch(/^Fetched results r0 to r\d+: /);
    expect(summary?.text).toMatch(/more characters of this summary left out\]$/);

    // Later runs of the session send that summary with every request (and every summary request): they complete.
    for (const input of ['fetch them again', 'and once more']) {
      const next = await harness.engine.startRun({ input, sessionId: first.sessionId });
      const after = await harness.engine.waitForRun(next.runId, { timeoutMs: 120_000 });
      expect(after.status, JSON.stringify(after.error)).toBe('completed');
    }
    const largest = Math.max(...model.requests.map((request) => request.tokens));
    console.log(
      `summary-bounds: ${model.requests.length} requests, ${model.requests.filter((request) => request.refused).length} refused, largest ${largest} tokens; view ${summary?.text.length} characters`,
    );
  }, 240_000);

  it('an empty summary of a request that still fits: the compaction is declined and recorded, and the run completes', async () => {
    // Five results of 2,000 characters (500 tokens each) against a 4,000-token window with a threshold of 0.4:
    // a compaction is due from the fourth result on, while every request stays well within the window.
    const calls = [0, 1, 2, 3, 4].map((index) => ({
      tool_calls: [{ name: 'big_result', arguments: { label: `r${index}`, size: 2000 } }],
    }));
    harness = new Harness({
      script: { replies: [...calls, { text: 'done' }], summary: { text: '   ' } },
      provider: { context_window: 4000 },
      agent: { effects: [{ kind: 'compact', params: { threshold: 0.4 } }] },
    });
    // The first worker dies right after the declined compaction is committed: the next one must act on it.
    const crashing = harness.spawnWorker({ crashAt: 'iteration.after_summary_commit' });
    const { runId, sessionId } = await harness.engine.startRun({ input: 'fetch five results' });
    // (A run that ends without reaching that point ends this wait too, and fails the assertions below.)
    await Promise.race([crashing.exited, harness.engine.waitForRun(runId, { timeoutMs: 120_000 })]);
    harness.spawnWorker();
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 120_000 });
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    expect(run.result).toBe('done');

    const summaryCalls = harness.modelCalls().filter((call) => call.purpose === 'summary');
    expect(summaryCalls.length).toBeGreaterThan(0);
    // One summary request per iteration: the worker that took over read the recorded decision.
    const iterations = summaryCalls.map((call) => call.iteration);
    expect(new Set(iterations).size).toBe(iterations.length);
    const events = await harness.events(sessionId);
    expect(events.filter((event) => event.kind === 'compaction')).toHaveLength(0);
    const [view] = (await storedViews(harness)).map((json) => contextViewSchema.parse(JSON.parse(json)));
    expect(view?.summary).toBeNull();
    expect(view?.declined).toMatchObject({ run_id: runId, iteration: Math.max(...iterations) });
  }, 240_000);
});
