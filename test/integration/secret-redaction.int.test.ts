import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis, type RedisClient } from '../../src/redis/connection.js';
import { deleteKeys, Harness } from '../helpers/harness.js';

const apiKey = 'sk-leaky-0123456789abcdef';

/** An OpenAI-compatible server that answers each request with the next handler, echoing the key it got. */
async function leakyModelServer(handlers: ((response: ServerResponse, key: string) => void)[]) {
  let requests = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests += 1;
      const key = (request.headers.authorization ?? '').replace(/^Bearer /, '');
      const handler = handlers.shift();
      if (handler) handler(response, key);
      else response.writeHead(401, { 'content-type': 'application/json' }).end(authError(key));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const authError = (key: string) =>
  JSON.stringify({ error: { message: `Incorrect API key provided: ${key}.`, code: 'invalid_api_key' } });

/** Every value stored under the prefix, as text: records, chats, journals, event streams, BullMQ's jobs. */
async function everythingStored(redis: RedisClient, prefix: string): Promise<string> {
  const texts: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const type = await redis.type(key);
      if (type === 'string') texts.push((await redis.get(key)) ?? '');
      else if (type === 'hash') texts.push(JSON.stringify(await redis.hgetall(key)));
      else if (type === 'list') texts.push(JSON.stringify(await redis.lrange(key, 0, -1)));
      else if (type === 'set') texts.push(JSON.stringify(await redis.smembers(key)));
      else if (type === 'zset') texts.push(JSON.stringify(await redis.zrange(key, 0, -1)));
      else if (type === 'stream') texts.push(JSON.stringify(await redis.xrange(key, '-', '+')));
      texts.push(key);
    }
  } while (cursor !== '0');
  return texts.join('\n');
}

let harness: Harness | undefined;
let model: Awaited<ReturnType<typeof leakyModelServer>> | undefined;
afterEach(async () => {
  await harness?.close();
  await model?.close();
  harness = undefined;
  model = undefined;
});

describe('secrets in upstream error text', () => {
  it('a provider that echoes its API key in errors leaves it in no record, event, log line or Redis key', async () => {
    model = await leakyModelServer([
      // A retryable error: an `error` event, a log line and BullMQ's failed reason of the attempt.
      (response, key) => response.writeHead(500, { 'content-type': 'application/json' }).end(authError(key)),
      // A reply that does not parse: the SDK's own exception quotes the body.
      (response, key) =>
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ id: key, choices: `not a list: ${key}` })),
      // Then the final refusal, which fails the run.
    ]);
    harness = new Harness({
      providerEntry: {
        name: 'model',
        kind: 'openai_compatible',
        model: 'local-model',
        base_url: model.baseUrl,
        api_key: apiKey,
        rate_limit: { max_retries: 3, base_delay_ms: 10 },
      },
      worker: { step_attempts: 4 },
    });
    const worker = harness.spawnWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'hello' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    await worker.stop();

    // The key did reach the server, and its echo reached Ratchet.
    expect(model.requests()).toBeGreaterThanOrEqual(3);
    expect(run.status).toBe('failed');
    expect(run.error?.message).toContain('[redacted]');
    const events = await harness.engine.readEvents(sessionId);
    const errorEvents = events.filter((event) => event.kind === 'error');
    expect(errorEvents.length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(errorEvents)).toContain('[redacted]');

    expect(JSON.stringify(run)).not.toContain(apiKey);
    expect(JSON.stringify(events)).not.toContain(apiKey);
    expect(worker.output()).toContain('[redacted]');
    expect(worker.output()).not.toContain(apiKey);
    expect(await everythingStored(harness.redis, harness.prefix)).not.toContain(apiKey);
  });

  it('a provider that quotes the key cut short, in base64 or in hex leaves none of these forms anywhere', async () => {
    const hex = Buffer.from(apiKey).toString('hex');
    const base64 = Buffer.from(apiKey).toString('base64');
    const basic = Buffer.from(`user:${apiKey}`).toString('base64');
    const leaks = {
      allButLast4: apiKey.slice(0, -4),
      truncated: apiKey.slice(0, 13),
      base64,
      urlSafeBase64: base64.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, ''),
      hex,
      upperHex: hex.toUpperCase(),
      // The characters of the Basic blob that depend on the key's bytes alone ("user:" fills 6 of them + 4 bits).
      basicKeyPart: basic.slice(7, -2),
    };
    const error = (status: number, message: string) => (response: ServerResponse) =>
      response
        .writeHead(status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message, type: 'invalid_request_error', code: 'invalid_api_key' } }));
    model = await leakyModelServer([
      error(500, `Incorrect API key provided: ${leaks.allButLast4}****. Hint: ${leaks.truncated}...def`),
      error(500, `credential (base64) ${leaks.base64}, url-safe ${leaks.urlSafeBase64}`),
      error(500, `key bytes ${leaks.hex} / ${leaks.upperHex}`),
      error(401, `rejected header Authorization: Basic ${basic}`),
    ]);
    harness = new Harness({
      providerEntry: {
        name: 'model',
        kind: 'openai_compatible',
        model: 'local-model',
        base_url: model.baseUrl,
        api_key: apiKey,
        rate_limit: { max_retries: 4, base_delay_ms: 10 },
      },
      worker: { step_attempts: 5 },
    });
    const worker = harness.spawnWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'hello' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    await worker.stop();

    expect(model.requests()).toBeGreaterThanOrEqual(4);
    expect(run.status).toBe('failed');
    expect(run.error?.message).toContain('rejected header Authorization: Basic');
    const events = await harness.engine.readEvents(sessionId);
    const errorEvents = JSON.stringify(events.filter((event) => event.kind === 'error'));
    // Each upstream message arrived (its words are there), with the key's forms hidden.
    for (const words of ['Incorrect API key provided', 'credential (base64)', 'key bytes']) {
      expect(errorEvents).toContain(words);
    }
    const stored = await everythingStored(harness.redis, harness.prefix);
    const chat = JSON.stringify(await harness.transcript(sessionId));
    for (const [form, text] of Object.entries(leaks)) {
      expect({ form, leaked: JSON.stringify(run).includes(text) }).toEqual({ form, leaked: false });
      expect({ form, leaked: JSON.stringify(events).includes(text) }).toEqual({ form, leaked: false });
      expect({ form, leaked: chat.includes(text) }).toEqual({ form, leaked: false });
      expect({ form, leaked: stored.includes(text) }).toEqual({ form, leaked: false });
      expect({ form, leaked: worker.output().includes(text) }).toEqual({ form, leaked: false });
    }
  });

  it('a tool whose exception quotes a secret of the environment gives the model a redacted error', async () => {
    harness = new Harness({
      script: {
        replies: [
          // The model never sees the secret: the tool's own exception quotes it.
          {
            tool_calls: [{ name: 'explode', arguments: { message: 'connect failed for %SERVICE_TOKEN%' } }],
          },
          { text: 'done' },
        ],
      },
    });
    const secret = 'tok-unexpected-exception-0123456789';
    // The secret is registered from the environment (a *_TOKEN variable) when the worker loads its config.
    const worker = harness.spawnWorker({ env: { SERVICE_TOKEN: secret } });
    const { runId, sessionId } = await harness.engine.startRun({ input: 'go' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    await worker.stop();
    expect(run.status).toBe('completed');
    const chat = await harness.transcript(sessionId);
    const result = JSON.stringify(chat[2]);
    expect(result).toContain('[redacted]');
    expect(await everythingStored(harness.redis, harness.prefix)).not.toContain(secret);
    expect(worker.output()).not.toContain(secret);
  });
});

/** Runs test/fixtures/config-path-secrets.ts (a program using Ratchet as a library) to its end. */
async function runLibraryProgram(mode: string, apiKey: string, redisUrl: string, prefix: string) {
  const child = spawn(
    process.execPath,
    [
      '--import',
      import.meta.resolve('tsx'),
      resolve(import.meta.dirname, '../fixtures/config-path-secrets.ts'),
      mode,
      apiKey,
      redisUrl,
      prefix,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RATCHET_LOG_LEVEL: 'info' } },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  return { code, output };
}

describe('secrets of a config, whatever built it', () => {
  // The documented library path (every example uses parseConfigText) registered nothing: a middleware's
  // error quoting the provider key was stored and logged verbatim.
  it.each([
    ['loadConfig', 'load'],
    ['parseConfigText', 'parse'],
    ['a config object changed after parsing, given to the worker and the engine', 'object'],
  ])(
    '%s: a middleware error quoting the provider key leaves it in no record, event, key or log line',
    async (_path, mode) => {
      const apiKey = `sk-path-${mode}-${randomBytes(8).toString('hex')}`;
      const redisUrl = inject('redisUrl');
      const prefix = `t-${randomBytes(6).toString('hex')}`;
      const redis = createRedis({ url: redisUrl, logger: silentLogger(), name: 'test' });
      try {
        const { code, output } = await runLibraryProgram(mode, apiKey, redisUrl, prefix);
        expect(code, output).toBe(0);
        const result = JSON.parse(/^RESULT (.*)$/m.exec(output)?.[1] ?? '{}');
        expect(result.status).toBe('failed');
        // The error arrived (its words are there), with the key hidden.
        expect(output).toContain('upstream refused the key [redacted] (401)');
        expect(output).not.toContain(apiKey);
        const stored = await everythingStored(redis, prefix);
        expect(stored).toContain('upstream refused the key [redacted]');
        expect(stored).not.toContain(apiKey);
      } finally {
        await deleteKeys(redis, prefix);
        await closeRedis(redis);
      }
    },
  );
});
