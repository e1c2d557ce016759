import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { contextViewSchema, summaryBound } from '../../src/workflows/core/effects/index.js';
import { Harness } from '../helpers/harness.js';

/**
 * A local OpenAI-compatible server that refuses a request over `limit` tokens (three characters a token) with
 * OpenAI's real context_length_exceeded error, and whose model fetches results r0, r1, ... with big_result
 * and answers a summary request with `summaryChars` characters: the labels it saw, then filler. It finds its
 * place from the highest label it can see, so a summarised conversation goes on where it was.
 */
async function verboseSummariser(options: { limit: number; results: number; summaryChars: number }) {
  const requests: { tokens: number; refused: boolean; summary: boolean }[] = [];
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    request.on('end', () => {
      const body = JSON.parse(text) as {
        messages: { content?: unknown; tool_calls?: { function: { arguments: string } }[] }[];
        tools?: unknown[];
      };
      const contentText = (content: unknown): string =>
        typeof content === 'string'
          ? content
          : Array.isArray(content)
            ? content.map((part) => (part as { text?: string }).text ?? '').join('')
            : '';
      let chars = body.tools ? JSON.stringify(body.tools).length : 0;
      for (const message of body.messages) {
        chars += contentText(message.content).length + 16;
        for (const call of message.tool_calls ?? []) chars += call.function.arguments.length;
      }
      const tokens = Math.ceil(chars / 3);
      const all = body.messages.map((message) => contentText(message.content)).join('\n');
      const summary = all.includes('You compress the working memory of an agent');
      const refused = tokens > options.limit;
      requests.push({ tokens, refused, summary });
      if (refused) {
        response.writeHead(400, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            error: {
              message: `This model's maximum context length is ${options.limit} tokens. However, your messages resulted in ${tokens} tokens.`,
              type: 'invalid_request_error',
              param: 'messages',
              code: 'context_length_exceeded',
            },
          }),
        );
        return;
      }
      const labels = [...all.matchAll(/\br(\d+):/g)].map((match) => Number(match[1]));
      const next = labels.length === 0 ? 0 : Math.max(...labels) + 1;
      let message: Record<string, unknown>;
      if (summary) {
        const head = `Fetched results r0 to r${next - 1}: each was a block of dots. `;
        message = { content: head + 'And so on. '.repeat(options.summaryChars / 11) };
      } else if (next >= options.results) {
        message = { content: `done: fetched ${options.results} results` };
      } else {
        message = {
          content: null,
          tool_calls: [
            {
              id: `call_${next}`,
              type: 'function',
              function: { name: 'big_result', arguments: JSON.stringify({ label: `r${next}`, size: 3000 }) },
            },
          ],
        };
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: `chatcmpl-${requests.length}`,
          object: 'chat.completion',
          created: 1741570283,
          model: 'local-model',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', ...message },
              finish_reason: message.tool_calls ? 'tool_calls' : 'stop',
            },
          ],
          usage: { prompt_tokens: tokens, completion_tokens: 20, total_tokens: tokens + 20 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
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
