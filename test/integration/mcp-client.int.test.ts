import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { type Message, toolResultsOf } from '../../src/chat/index.js';
import { loadConfig } from '../../src/config/index.js';
import { engineFromConfig } from '../../src/engine/index.js';
import { silentLogger } from '../../src/log/index.js';
import type { Script } from '../../src/models/index.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import { knownToolboxes } from '../../src/tools/builtin/index.js';
import type { ToolBox } from '../../src/tools/index.js';
import { RatchetWorker } from '../../src/worker/index.js';
import { type McpHttpServer, startMcpHttpServer } from '../fixtures/mcp-http-server.js';
import { deleteKeys, Harness } from '../helpers/harness.js';

const everythingStdio = resolve(import.meta.dirname, '../fixtures/mcp-everything-stdio.mjs');

let harness: Harness | undefined;
let httpServer: McpHttpServer | undefined;
let pidDir: string | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await httpServer?.stop();
  httpServer = undefined;
  if (pidDir) rmSync(pidDir, { recursive: true, force: true });
  pidDir = undefined;
});

/** A harness whose agent has only the given MCP server's toolbox. */
function mcpHarness(script: Script, server: Record<string, unknown>): Harness {
  harness = new Harness({
    script,
    agent: { toolboxes: [server.name] },
    config: { mcp_servers: [server] },
  });
  return harness;
}

function stdioEverything(pidFile: string): Record<string, unknown> {
  return {
    name: 'everything',
    command: process.execPath,
    args: [everythingStdio],
    env: { MCP_PID_FILE: pidFile },
    timeout_ms: 30_000,
  };
}

function toolResults(chat: readonly Message[]) {
  return chat
    .filter((message) => message.role === 'tool')
    .flatMap((message) => toolResultsOf(message))
    .map((result) => ({ content: result.content, is_error: result.is_error }));
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
}

describe('MCP servers as toolboxes in a run', () => {
  it("completes a run that calls a stdio server's tool, with the tool's result in the chat", async () => {
    const h = mcpHarness(
      {
        replies: [
          { tool_calls: [{ name: 'echo', arguments: { message: 'hello from the agent' } }] },
          { text: 'The server echoed it.' },
        ],
      },
      stdioEverything(pidFilePath()),
    );
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'echo something' });
    const run = await h.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('The server echoed it.');
    expect(toolResults(await h.transcript(sessionId))).toEqual([
      { content: 'Echo: hello from the agent', is_error: false },
    ]);
  });

  it('gives the model an error when the server dies mid-call, and the next call reaches a new server', async () => {
    const pidFile = pidFilePath();
    const h = mcpHarness(
      {
        replies: [
          {
            tool_calls: [{ name: 'trigger-long-running-operation', arguments: { duration: 30, steps: 30 } }],
          },
          { tool_calls: [{ name: 'echo', arguments: { message: 'are you back?' } }] },
          { text: 'Recovered after the server crashed.' },
        ],
      },
      stdioEverything(pidFile),
    );
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'go' });
    await waitFor(async () => (await h.events(sessionId)).some((event) => event.kind === 'tool_call_start'));
    const [firstPid] = readPids(pidFile);
    await new Promise((resolveWait) => setTimeout(resolveWait, 300));
    process.kill(firstPid ?? 0, 'SIGKILL');

    const run = await h.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('Recovered after the server crashed.');
    const results = toolResults(await h.transcript(sessionId));
    expect(results).toEqual([
      {
        content: expect.stringMatching(
          /^tool "trigger-long-running-operation" failed: MCP server "everything" is unavailable: .*Connection closed/,
        ),
        is_error: true,
      },
      { content: 'Echo: are you back?', is_error: false },
    ]);
    expect(readPids(pidFile)).toHaveLength(2);
  });

  it('goes on while an HTTP server is down, and reconnects when it is back', async () => {
    httpServer = await startMcpHttpServer('streamable');
    const h = mcpHarness(
      {
        replies: [
          { tool_calls: [{ name: 'echo', arguments: { message: 'one' } }] },
          // The server drops every connection mid-call and listens again 1.5 s later.
          { tool_calls: [{ name: 'go_down', arguments: { down_ms: 1500 } }] },
          { tool_calls: [{ name: 'echo', arguments: { message: 'two' } }] },
          { delay_ms: 3000, tool_calls: [{ name: 'echo', arguments: { message: 'three' } }] },
          { text: 'All done.' },
        ],
      },
      { name: 'remote', url: httpServer.url, timeout_ms: 10_000 },
    );
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'go' });
    const run = await h.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('All done.');
    expect(toolResults(await h.transcript(sessionId))).toEqual([
      { content: 'Echo: one', is_error: false },
      {
        content: expect.stringMatching(
          /^tool "go_down" failed: MCP server "remote" is unavailable: fetch failed/,
        ),
        is_error: true,
      },
      {
        content: expect.stringMatching(
          /^tool "echo" failed: MCP server "remote" is unavailable: fetch failed/,
        ),
        is_error: true,
      },
      { content: 'Echo: three', is_error: false },
    ]);
    expect(httpServer.sessions()).toBe(2);
  });
});

describe('config/mcp.yaml', () => {
  it('runs as shipped: the scripted agent calls two tools of server-everything', async () => {
    const toolboxes: ToolBox[] = [];
    const loaded = loadConfig(resolve(import.meta.dirname, '../../config/mcp.yaml'), {
      env: { ...process.env, REDIS_URL: inject('redisUrl') },
      knownToolboxes: knownToolboxes(toolboxes),
    });
    const prefix = `t-${randomBytes(6).toString('hex')}`;
    const config = { ...loaded.config, redis: { ...loaded.config.redis, prefix } };
    const redis = createRedis({ url: config.redis.url, logger: silentLogger(), name: 'test' });
    const engine = engineFromConfig({ config, redis, logger: silentLogger() });
    const worker = new RatchetWorker({ loaded: { ...loaded, config }, toolboxes, logger: silentLogger() });
    try {
      await worker.start();
      const { runId, sessionId } = await engine.startRun({ input: 'say hello' });
      const run = await engine.waitForRun(runId, { timeoutMs: 30_000 });
      expect(run.status).toBe('completed');
      expect(toolResults(await engine.readChat(sessionId))).toEqual([
        { content: 'Echo: Hello over MCP', is_error: false },
        { content: 'The sum of 17 and 25 is 42.', is_error: false },
      ]);
    } finally {
      await worker.close(2000);
      await engine.close();
      await deleteKeys(redis, prefix);
      await closeRedis(redis);
    }
  });
});

/** Where a test's stdio server writes its pids. */
function pidFilePath(): string {
  pidDir = mkdtempSync(join(tmpdir(), 'ratchet-mcp-pids-'));
  return join(pidDir, 'pids');
}

function readPids(pidFile: string): number[] {
  if (!existsSync(pidFile)) return [];
  return readFileSync(pidFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map(Number);
}
