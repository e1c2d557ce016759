import { afterEach, describe, expect, it } from 'vitest';
import type { RatchetEvent } from '../../src/events/event.js';
import { Harness } from '../helpers/harness.js';
import { limitedModel } from '../helpers/limited-model.js';

let harness: Harness | undefined;
let model: Awaited<ReturnType<typeof limitedModel>> | undefined;
afterEach(async () => {
  await harness?.close();
  await model?.close();
  harness = undefined;
  model = undefined;
});

async function runAgainst(
  server: NonNullable<typeof model>,
  agent: Record<string, unknown>,
  instructions?: string,
) {
  harness = new Harness({
    providerEntry: {
      name: 'model',
      kind: 'openai_compatible',
      model: 'local-model',
      base_url: server.baseUrl,
      context_window: 8000,
    },
    maxIterations: 100,
    agent,
    ...(instructions ? { instructions } : {}),
  });
  await harness.startWorker();
  const { runId, sessionId } = await harness.engine.startRun({ input: 'fetch every result' });
  const run = await harness.engine.waitForRun(runId, { timeoutMs: 120_000 });
  const events = await harness.events(sessionId);
  const compactions = events.filter(
    (event): event is Extract<RatchetEvent, { kind: 'compaction' }> => event.kind === 'compaction',
  );
  return { run, transcript: await harness.transcript(sessionId), compactions };
}

describe('a long run against a model that enforces its context window', () => {
  it('60 large tool results: the run completes, no over-limit request is sent more than once per compaction, and the transcript keeps every message', async () => {
    model = await limitedModel({ limit: 8000, charsPerToken: 3, results: 60, size: 3000 });
    // The defaults: trim_tool_results and compact at 0.8 of the 8000-token window.
    const { run, transcript, compactions } = await runAgainst(model, { options: { max_iterations: 100 } });
    console.log(
      `context-limit: ${model.requests.length} requests, ${compactions.length} compactions, ` +
        `${model.requests.filter((request) => request.refused).length} refused, largest ${Math.max(...model.requests.map((request) => request.tokens))} tokens`,
    );
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    expect(run.result).toBe('done: fetched 60 results');
    // Input, 61 replies, 60 results: every message stays in the transcript.
    expect(transcript).toHaveLength(1 + 61 + 60);
    expect(transcript.filter((message) => message.role === 'tool')).toHaveLength(60);
    const refused = model.requests.filter((request) => request.refused).length;
    expect(compactions.length).toBeGreaterThan(1);
    expect(refused).toBeLessThanOrEqual(compactions.length);
    // Each refusal was answered by a compaction of its own.
    expect(compactions.filter((event) => event.data.reason === 'context_length_error').length).toBe(refused);
    // Without effects the 60th request alone would be about 60 × 1000 tokens.
    const largest = Math.max(...model.requests.map((request) => request.tokens));
    expect(largest).toBeLessThan(8000 * 1.5);
  });

  it('a refusal the threshold did not foresee is compacted and retried (reactive compaction)', async () => {
    // A tokenizer that counts twice what Ratchet estimates, a server that does not report usage (so nothing
    // corrects the estimate), and a threshold that acts too late for it.
    model = await limitedModel({
      limit: 8000,
      charsPerToken: 2,
      results: 12,
      size: 3000,
      reportUsage: false,
    });
    const { run, compactions } = await runAgainst(model, {
      effects: [{ kind: 'compact', params: { threshold: 1 } }],
    });
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    const refused = model.requests.filter((request) => request.refused && !request.summary).length;
    expect(refused).toBeGreaterThan(0);
    const reactive = compactions.filter((event) => event.data.reason === 'context_length_error');
    expect(reactive.length).toBe(refused);
    // A summary request refused as too long is made again with half the transcript (at most twice).
    const refusedSummaries = model.requests.filter((request) => request.refused && request.summary).length;
    expect(refusedSummaries).toBeLessThanOrEqual(2 * compactions.length);
  });

  it('fails with context_exceeded when even the compacted request does not fit', async () => {
    model = await limitedModel({ limit: 8000, charsPerToken: 2, results: 5, size: 100 });
    // A system prompt of about 10,000 tokens by the server's count: nothing can be summarised away.
    const { run } = await runAgainst(model, {}, 'Follow these rules. '.repeat(1000));
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('context_exceeded');
    expect(run.error?.message).toMatch(/does not fit the model's context window of 8000 tokens/);
  });

  it('without a compact effect, a refusal fails the run with context_exceeded and says how to fix it', async () => {
    model = await limitedModel({ limit: 8000, charsPerToken: 2, results: 20, size: 3000 });
    const { run, compactions } = await runAgainst(model, { effects: [] });
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('context_exceeded');
    expect(run.error?.message).toContain('add a `compact` effect');
    expect(compactions).toHaveLength(0);
  });
});
