import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Harness } from '../helpers/harness.js';

/**
 * A local OpenAI-compatible /v1/chat/completions server whose model, asked `huge`, answers with a reply of
 * `chars` characters — as text, as one tool call's arguments, or streamed as text deltas — written in 1 MB
 * pieces as fast as the client reads them; any other input gets "ok". It records how many bytes of each reply
 * it could write before the client hung up.
 */
async function runawayModel(shape: 'text' | 'tool_arguments' | 'stream', chars: number) {
  const replies: { huge: boolean; bytesWritten: number; complete: boolean }[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      const huge = body.includes('huge');
      const reply = { huge, bytesWritten: 0, complete: false };
      replies.push(reply);
      void answer(response, huge ? chars : 0, shape, reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    replies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function answer(
  response: ServerResponse,
  chars: number,
  shape: 'text' | 'tool_arguments' | 'stream',
  reply: { bytesWritten: number; complete: boolean },
): Promise<void> {
  let closed = false;
  let wake: (() => void) | undefined;
  response.on('close', () => {
    closed = true;
    wake?.();
  });
  response.on('drain', () => wake?.());
  const write = async (text: string): Promise<boolean> => {
    if (closed || response.destroyed) return false;
    reply.bytesWritten += Buffer.byteLength(text);
    if (!response.write(text)) {
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
    return !closed;
  };
  const envelope = (message: string) =>
    `{"id":"chatcmpl-1","object":"chat.completion","created":1741570283,"model":"local-model","choices":[{"index":0,${message}}],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}`;
  if (shape === 'stream') {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta: string, finish: string | null) =>
      `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741570283,"model":"local-model","choices":[{"index":0,"delta":{"content":"${delta}"},"finish_reason":${finish === null ? 'null' : `"${finish}"`}}]}\n\n`;
    const deltaPiece = chars === 0 ? 'ok' : 'a'.repeat(10_000);
    for (let sent = 0; sent < Math.max(chars, 1); sent += deltaPiece.length) {
      if (!(await write(chunk(deltaPiece, null)))) return;
    }
    await write(chunk('', 'stop'));
    await write('data: [DONE]\n\n');
    response.end();
    reply.complete = true;
    return;
  }
  response.writeHead(200, { 'content-type': 'application/json' });
  if (chars === 0) {
    response.end(
      envelope('"message":{"role":"assistant","content":"ok"},"logprobs":null,"finish_reason":"stop"'),
    );
    reply.complete = true;
    return;
  }
  const [head, tail] =
    shape === 'text'
      ? envelope(
          '"message":{"role":"assistant","content":"\u0000"},"logprobs":null,"finish_reason":"stop"',
        ).split('\u0000')
      : envelope(
          '"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"slow_echo","arguments":"{\\"text\\":\\"\u0000\\"}"}}]},"logprobs":null,"finish_reason":"tool_calls"',
        ).split('\u0000');
  const piece = 'a'.repeat(1_000_000);
  if (!(await write(head as string))) return;
  for (let sent = 0; sent < chars; sent += piece.length) {
    if (!(await write(piece))) return;
  }
  await write(tail as string);
  response.end();
  reply.complete = true;
}

/** Bytes Redis holds for every key of the test's prefix (MEMORY USAGE), and the longest string (STRLEN). */
async function redisBytes(harness: Harness): Promise<{ total: number; keys: number }> {
  let cursor = '0';
  let total = 0;
  let keys = 0;
  do {
    const [next, found] = await harness.redis.scan(cursor, 'MATCH', `${harness.prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of found) {
      keys += 1;
      total += Number((await harness.redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
    }
  } while (cursor !== '0');
  return { total, keys };
}

/** The process's peak resident set (VmHWM) in MB, from /proc. */
function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

let harness: Harness | undefined;
let model: Awaited<ReturnType<typeof runawayModel>> | undefined;
afterEach(async () => {
  await harness?.close();
  await model?.close();
  harness = undefined;
  model = undefined;
});

describe('a model reply of 20 million characters through a real provider wire format', () => {
  for (const shape of ['text', 'tool_arguments', 'stream'] as const) {
    it(`(${shape}) fails the attempt with reply_too_large, the worker stays up and Redis stays small`, async () => {
      model = await runawayModel(shape, 20_000_000);
      harness = new Harness({
        providerEntry: {
          name: 'model',
          kind: 'openai_compatible',
          model: 'local-model',
          base_url: model.baseUrl,
        },
        ...(shape === 'stream' ? { agent: { options: { max_iterations: 10, stream: true } } } : {}),
      });
      const worker = harness.spawnWorker();
      const pid = worker.child.pid as number;
      // A first run warms the worker up: its peak memory after it is the baseline.
      const warm = await harness.engine.startRun({ input: 'say ok' });
      expect((await harness.engine.waitForRun(warm.runId, { timeoutMs: 60_000 })).status).toBe('completed');
      const before = await redisBytes(harness);
      const rssBefore = peakRssMb(pid);

      const { runId, sessionId } = await harness.engine.startRun({ input: 'answer with something huge' });
      const run = await harness.engine.waitForRun(runId, { timeoutMs: 120_000 });
      const after = await redisBytes(harness);
      const rssAfter = peakRssMb(pid);
      const huge = model.replies.filter((reply) => reply.huge);
      console.log(
        `reply-size (${shape}): Redis +${after.total - before.total} bytes over ${after.keys - before.keys} new keys ` +
          `(${after.total} in all); worker peak RSS ${rssBefore.toFixed(0)} → ${rssAfter.toFixed(0)} MB; ` +
          `server wrote ${huge.map((reply) => reply.bytesWritten).join(', ')} bytes of ${huge.length} huge replies`,
      );

      expect(run.status).toBe('failed');
      expect(run.error?.code).toBe('reply_too_large');
      expect(run.error?.message).toContain('max_reply_chars of 1000000');
      // Not retried: one huge request, and it was not read to its end.
      expect(huge).toHaveLength(1);
      expect(huge[0]?.complete).toBe(false);
      // Nothing of the reply was recorded: the run (record, chat, events, journal) adds a few KB; streamed, its
      // text_delta events add at most the limit's worth of preview (1,000,000 characters) on top.
      expect(after.total - before.total).toBeLessThan(shape === 'stream' ? 1_500_000 : 100_000);
      const transcript = await harness.transcript(sessionId);
      expect(JSON.stringify(transcript).length).toBeLessThan(100_000);
      // The worker did not buffer the reply: its peak grew by far less than 20 MB of text would cost.
      expect(rssAfter - rssBefore).toBeLessThan(100);

      // The worker is still up and serves the next run.
      const next = await harness.engine.startRun({ input: 'say ok again' });
      expect((await harness.engine.waitForRun(next.runId, { timeoutMs: 60_000 })).status).toBe('completed');
      expect(worker.child.exitCode).toBeNull();
    }, 180_000);
  }
});
