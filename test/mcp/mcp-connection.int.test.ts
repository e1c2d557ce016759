import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { McpServerConfig } from '../../src/config/index.js';
import { createLogger, silentLogger } from '../../src/log/index.js';
import { McpConnection, type McpToolListings, redisToolListings } from '../../src/mcp/client/index.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import { findTool, runToolHandler, type ToolContext } from '../../src/tools/index.js';
import { type McpHttpServer, startMcpHttpServer } from '../fixtures/mcp-http-server.js';
import { deleteKeys } from '../helpers/harness.js';
import { toolContext } from '../helpers/tool-calls.js';

const repoRoot = resolve(import.meta.dirname, '../..');
const everythingStdio = join(repoRoot, 'test/fixtures/mcp-everything-stdio.mjs');

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function connect(server: McpServerConfig, listings?: McpToolListings): McpConnection {
  const connection = new McpConnection({
    server,
    configDir: repoRoot,
    logger: silentLogger(),
    reconnectDelayMs: { initial: 100, max: 500 },
    ...(listings ? { listings } : {}),
  });
  cleanups.push(() => connection.close());
  return connection;
}

function stdioServer(overrides: Partial<McpServerConfig> = {}): McpServerConfig {
  return {
    name: 'everything',
    transport: 'stdio',
    command: process.execPath,
    args: [everythingStdio],
    env: {},
    cwd: undefined,
    timeout_ms: 10_000,
    connect_timeout_ms: 20_000,
    ...overrides,
  } as McpServerConfig;
}

function httpServer(url: string, headers: Record<string, string> = {}): McpServerConfig {
  return { name: 'remote', transport: 'http', url, headers, timeout_ms: 5_000, connect_timeout_ms: 5_000 };
}

function context(signal = new AbortController().signal): ToolContext {
  return toolContext({
    signal,
    ask: async () => {
      throw new Error('no questions here');
    },
  });
}

/** Runs a tool of the connection's toolbox as a tool step would: an error becomes an error outcome. */
async function call(connection: McpConnection, name: string, input: unknown, signal?: AbortSignal) {
  const tool = findTool([connection.toolbox], name);
  if (!tool) throw new Error(`no tool ${name}`);
  const parsed = tool.inputSchema.safeParse(input);
  if (!parsed.success) return { content: `invalid: ${parsed.error.message}`, isError: true };
  return runToolHandler(tool, parsed.data, context(signal));
}

describe('an MCP server over stdio (server-everything)', () => {
  it('lists its tools with their schemas and idempotency, and calls them', async () => {
    const connection = connect(stdioServer());
    await connection.start();
    const names = connection.toolbox.tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image', 'toggle-simulated-logging']),
    );
    const echo = findTool([connection.toolbox], 'echo');
    expect(echo?.jsonSchema).toMatchObject({ type: 'object', required: ['message'] });
    // Read-only per its annotations: safe to re-run; a tool without such a hint is not.
    expect(echo?.idempotent).toBe(true);
    expect(findTool([connection.toolbox], 'toggle-simulated-logging')?.idempotent).toBe(false);

    expect(await call(connection, 'echo', { message: 'hello' })).toEqual({
      content: 'Echo: hello',
      isError: false,
    });
    expect(await call(connection, 'get-sum', { a: 2, b: 40 })).toEqual({
      content: 'The sum of 2 and 40 is 42.',
      isError: false,
    });
    const image = await call(connection, 'get-tiny-image', {});
    expect(image.isError).toBe(false);
    expect(image.content).toMatch(
      /^Here's the image you requested:\n\n\[image image\/png, \d+ bytes, not shown\]/,
    );
    // Arguments are checked against the server's schema before the call.
    expect((await call(connection, 'echo', { message: 7 })).isError).toBe(true);
  });

  it('passes only the configured variables and a safe base environment to the server', async () => {
    process.env.RATCHET_TEST_WORKER_SECRET = 'worker-only-secret';
    cleanups.push(() => {
      delete process.env.RATCHET_TEST_WORKER_SECRET;
    });
    const connection = connect(stdioServer({ env: { MCP_TEST_VISIBLE: 'given-to-server' } }));
    await connection.start();
    const output = await call(connection, 'get-env', {});
    expect(output.isError).toBe(false);
    expect(output.content).toContain('given-to-server');
    expect(output.content).not.toContain('worker-only-secret');
  });

  it('gives an error when the server dies mid-call, then starts it again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ratchet-mcp-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const pidFile = join(dir, 'pids');
    const connection = connect(stdioServer({ env: { MCP_PID_FILE: pidFile } }));
    await connection.start();
    const firstPid = connection.pid;
    expect(firstPid).toBeGreaterThan(0);

    const slow = call(connection, 'trigger-long-running-operation', { duration: 20, steps: 20 });
    await new Promise((resolveWait) => setTimeout(resolveWait, 300));
    process.kill(firstPid ?? 0, 'SIGKILL');
    const outcome = await slow;
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toMatch(/MCP server "everything" is unavailable: .*Connection closed/);

    // Reconnected in the background (or by the next call): a new process serves the next call.
    expect(await call(connection, 'echo', { message: 'again' })).toEqual({
      content: 'Echo: again',
      isError: false,
    });
    expect(connection.pid).not.toBe(firstPid);
    expect(readFileSync(pidFile, 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('times out a call after timeout_ms, and stops a call whose signal aborts', async () => {
    const connection = connect(stdioServer({ timeout_ms: 500 }));
    await connection.start();
    const timedOut = await call(connection, 'trigger-long-running-operation', { duration: 10, steps: 10 });
    expect(timedOut).toEqual({
      content:
        'tool "trigger-long-running-operation" failed: MCP server "everything" did not answer within 500 ms',
      isError: true,
    });

    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('run cancelled')), 200);
    await expect(
      call(connection, 'trigger-long-running-operation', { duration: 10, steps: 10 }, controller.signal),
    ).rejects.toThrow();
    // The connection survives both.
    expect((await call(connection, 'echo', { message: 'still here' })).content).toBe('Echo: still here');
  });

  it('never logs the configured secrets, even when the server prints them', async () => {
    const lines: string[] = [];
    const logger = createLogger({
      level: 'debug',
      destination: { write: (line: string) => lines.push(line) },
    });
    const connection = new McpConnection({
      server: stdioServer({
        args: ['-e', 'console.error("my key is " + process.env.SERVICE_KEY); process.exit(3)'],
        env: { SERVICE_KEY: 'sk-live-very-secret' },
      }),
      configDir: repoRoot,
      logger,
    });
    cleanups.push(() => connection.close());
    await connection.start();
    const failure = lines.find((line) => line.includes('MCP server connection failed'));
    expect(failure).toContain('my key is [redacted]');
    expect(lines.join('\n')).not.toContain('sk-live-very-secret');
  });

  it('starts without a server that cannot be started, and says so on every call', async () => {
    const connection = connect(stdioServer({ command: join(repoRoot, 'no-such-mcp-server') }));
    await connection.start();
    expect(connection.connected).toBe(false);
    expect(connection.toolbox.tools).toEqual([]);
    await expect(connection.callTool('echo', {}, context())).rejects.toThrow(
      /MCP server "everything" is unavailable: .*ENOENT/,
    );
  });

  it('offers the tools another worker listed last when the server is down at start; calls get an error result', async () => {
    const redis = createRedis({ url: inject('redisUrl'), logger: silentLogger(), name: 'test' });
    const space = { prefix: `t-${randomBytes(6).toString('hex')}`, shards: 1 };
    cleanups.push(async () => {
      await deleteKeys(redis, space.prefix);
      await closeRedis(redis);
    });
    const listings = redisToolListings(redis, space);
    const first = connect(stdioServer(), listings);
    await first.start();
    const listed = first.toolbox.tools.map((tool) => tool.name);
    expect(listed).toContain('echo');
    await first.close();

    const second = connect(stdioServer({ command: join(repoRoot, 'no-such-mcp-server') }), listings);
    await second.start();
    expect(second.connected).toBe(false);
    expect(second.toolbox.tools.map((tool) => tool.name)).toEqual(listed);
    const outcome = await call(second, 'echo', { message: 'hi' });
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toMatch(/MCP server "everything" is unavailable/);
  });
});

describe('an MCP server over HTTP', () => {
  let server: McpHttpServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('speaks Streamable HTTP with the configured headers, mapping structured and error results', async () => {
    server = await startMcpHttpServer('streamable');
    const connection = connect(httpServer(server.url, { Authorization: 'Bearer test-token-123456' }));
    await connection.start();
    expect(connection.toolbox.tools.map((tool) => tool.name)).toEqual(['echo', 'add', 'fail', 'go_down']);
    expect(await call(connection, 'echo', { message: 'over http' })).toEqual({
      content: 'Echo: over http',
      isError: false,
    });
    expect(await call(connection, 'add', { a: 1, b: 2 })).toEqual({ content: '{"sum":3}', isError: false });
    expect(await call(connection, 'fail', {})).toEqual({
      content: 'tool "fail" failed: the widget is jammed',
      isError: true,
    });
    expect(server.headersSeen.length).toBeGreaterThan(0);
    for (const headers of server.headersSeen) expect(headers.authorization).toBe('Bearer test-token-123456');
  });

  it('offers the tools a server adds while connected, once it announces the change', async () => {
    server = await startMcpHttpServer('streamable');
    const connection = connect(httpServer(server.url));
    await connection.start();
    server.addTool('late_tool');
    const deadline = Date.now() + 10_000;
    while (!connection.toolbox.tools.some((tool) => tool.name === 'late_tool')) {
      if (Date.now() > deadline) throw new Error('the new tool was never listed');
      await new Promise((resolveWait) => setTimeout(resolveWait, 50));
    }
    expect(await call(connection, 'late_tool', {})).toEqual({ content: 'late_tool ran', isError: false });
  });

  it('gives an error while the server is down and reconnects when it is back', async () => {
    server = await startMcpHttpServer('streamable');
    const connection = connect(httpServer(server.url));
    await connection.start();
    expect((await call(connection, 'echo', { message: 'one' })).content).toBe('Echo: one');

    await server.stop();
    // The first request may fail on the kept-alive connection the server dropped ("other side closed"),
    // the next one finds nothing listening.
    for (const message of ['two', 'three']) {
      const down = await call(connection, 'echo', { message });
      expect(down.isError).toBe(true);
      expect(down.content).toMatch(/MCP server "remote" is unavailable: fetch failed/);
    }

    await server.restart();
    expect(await call(connection, 'echo', { message: 'four' })).toEqual({
      content: 'Echo: four',
      isError: false,
    });
    expect(server.sessions()).toBe(2);
  });

  it('opens a new session when a restarted server no longer knows the old one', async () => {
    server = await startMcpHttpServer('streamable');
    const connection = connect(httpServer(server.url));
    await connection.start();
    // The client still holds a session id the server has forgotten: 404, which the spec answers with a
    // new session (the refused call is sent again, once).
    await server.forgetSessions();
    expect(await call(connection, 'echo', { message: 'after restart' })).toEqual({
      content: 'Echo: after restart',
      isError: false,
    });
    expect(server.sessions()).toBe(2);
  });

  it('falls back to HTTP+SSE for a server that only speaks the older transport', async () => {
    server = await startMcpHttpServer('sse');
    const connection = connect(httpServer(server.url, { 'X-Api-Key': 'sse-secret-value' }));
    await connection.start();
    expect(connection.connected).toBe(true);
    expect(await call(connection, 'echo', { message: 'over sse' })).toEqual({
      content: 'Echo: over sse',
      isError: false,
    });
    const sseRequests = server.headersSeen.filter((headers) => headers.accept === 'text/event-stream');
    expect(sseRequests.length).toBeGreaterThan(0);
    for (const headers of server.headersSeen) expect(headers['x-api-key']).toBe('sse-secret-value');
  });
});
