import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Harness } from '../helpers/harness.js';

const MODEL = 'local-model';

/**
 * A local OpenAI-compatible /v1/chat/completions server whose first reply stops sending midway — streamed,
 * after one chunk; unstreamed, after half its JSON body — and is left open; every later request gets a whole
 * answer. It records, for each request, whether the client hung up before the reply was written whole.
 */
async function stallingModel() {
  const requests: { stream: boolean; cutShort: boolean }[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      const stream = (JSON.parse(body) as { stream?: boolean }).stream === true;
      const recorded = { stream, cutShort: false };
      requests.push(recorded);
      response.on('close', () => {
        if (!response.writableFinished) recorded.cutShort = true;
      });
      answer(response, stream, requests.length === 1);
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

const usage = { prompt_tokens: 40, completion_tokens: 5, total_tokens: 45 };

function answer(response: ServerResponse, stream: boolean, stall: boolean): void {
  if (stream) {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion.chunk',
        created: 1741570283,
        model: MODEL,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      })}\n\n`;
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write(chunk({ role: 'assistant', content: stall ? 'Hel' : 'All ' }));
    if (stall) return;
    response.write(chunk({ content: 'done.' }));
    response.write(chunk({}, 'stop'));
    response.write(
      `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1741570283, model: MODEL, choices: [], usage })}\n\n`,
    );
    response.end('data: [DONE]\n\n');
    return;
  }
  const body = JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1741570283,
    model: MODEL,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'All done.' },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage,
  });
  response.writeHead(200, { 'content-type': 'application/json' });
  if (stall) response.write(body.slice(0, Math.floor(body.length / 2)));
  else response.end(body);
}

let harness: Harness | undefined;
let model: Awaited<ReturnType<typeof stallingModel>> | undefined;
afterEach(async () => {
  await harness?.close();
  await model?.close();
  harness = undefined;
  model = undefined;
});

describe('a model request that stops sending', () => {
  for (const stream of [true, false]) {
    it(`(${stream ? 'streamed: one chunk, then nothing' : 'unstreamed: half a body, then nothing'}) is aborted after idle_timeout_ms, retried as a failed attempt, counted as retry waste, and the run completes`, async () => {
      model = await stallingModel();
      harness = new Harness({
        providerEntry: {
          name: 'model',
          kind: 'openai_compatible',
          model: MODEL,
          base_url: model.baseUrl,
          idle_timeout_ms: 300,
        },
        agent: { options: { max_iterations: 10, stream } },
      });
      await harness.startWorker();
      const { runId, sessionId } = await harness.engine.startRun({ input: 'finish the job' });
      const run = await harness.engine.waitForRun(runId, { timeoutMs: 60_000 });

      expect(run.status).toBe('completed');
      expect(run.result).toBe('All done.');
      // The stalled request was hung up on by the worker, and the retry was answered.
      expect(model.requests).toEqual([
        { stream, cutShort: true },
        { stream, cutShort: false },
      ]);
      // The stalled call is retry waste (the provider may have billed it); the usage is the answered call's.
      expect(run.usage).toMatchObject({ input_tokens: 40, output_tokens: 5, requests: 1 });
      expect(run.retry_waste).toMatchObject({ calls: 1, input_tokens: 40, output_tokens: 5 });

      // The failed attempt is in the event log with its cause; a streamed retry is announced, so a client drops
      // the partial text of the attempt that died.
      const events = await harness.events(sessionId);
      const failures = events.filter((event) => event.kind === 'error');
      expect(failures).toEqual([
        expect.objectContaining({
          data: expect.objectContaining({
            step: 'iteration 1',
            attempt: 1,
            code: 'model_stalled',
            final: false,
            message: expect.stringContaining('idle_timeout_ms (300 ms)'),
          }),
        }),
      ]);
      // The run's timeline (GET /v1/runs/:id/steps) shows the iteration's second attempt as a retry of the stall,
      // and both model calls.
      const timeline = await harness.engine.runSteps(runId, { from: 1, limit: 10, cutAt: 200 });
      const [iteration] = timeline?.steps ?? [];
      expect(iteration?.model_calls).toBe(2);
      expect(
        iteration?.attempts.map(({ attempt, cause, retry_of }) => ({ attempt, cause, retry_of })),
      ).toEqual([
        { attempt: 1, cause: 'first', retry_of: null },
        { attempt: 2, cause: 'retry', retry_of: 'model_stalled' },
      ]);
      const retried = events.filter((event) => event.kind === 'attempt_retried');
      if (stream) {
        expect(retried.map((event) => event.data)).toEqual([{ iteration: 1, attempt: 2 }]);
        const deltas = events.flatMap((event) =>
          event.kind === 'text_delta' ? [[event.data.attempt, event.data.delta]] : [],
        );
        expect(deltas).toEqual([
          [1, 'Hel'],
          [2, 'All '],
          [2, 'done.'],
        ]);
      } else {
        expect(retried).toEqual([]);
      }
    }, 90_000);
  }
});
