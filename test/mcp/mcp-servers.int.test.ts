import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { McpServerConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/log/index.js';
import { McpServers } from '../../src/mcp/client/index.js';
import { waitFor, waitForExit } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

// A worker's MCP servers together (McpServers): connected at once, so a slow server holds back none of the
// others, and each stdio server's process ended when the worker stops.

const repoRoot = resolve(import.meta.dirname, '../..');
const everythingStdio = join(repoRoot, 'test/fixtures/mcp-everything-stdio.mjs');

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A file the fixture servers append their pids to. */
function pidFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ratchet-mcp-servers-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'pids');
}

function pidsIn(file: string): number[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map(Number);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

function stdioServer(name: string, env: Record<string, string>): McpServerConfig {
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args: [everythingStdio],
    env,
    cwd: undefined,
    timeout_ms: 10_000,
    connect_timeout_ms: 60_000,
  } as McpServerConfig;
}

function servers(configs: McpServerConfig[]): McpServers {
  const started = new McpServers({ servers: configs, configDir: repoRoot, logger: silentLogger() });
  cleanups.push(() => started.close());
  return started;
}

describe("a worker's MCP servers", () => {
  it('connect at once: a fast server has its tools while two slow ones are still starting', async () => {
    // Each slow server reads nothing for 4 s. One after the other, the start would take at least 8 s.
    const delayMs = 4_000;
    const mcp = servers([
      stdioServer('slow_a', { MCP_START_DELAY_MS: String(delayMs) }),
      stdioServer('slow_b', { MCP_START_DELAY_MS: String(delayMs) }),
      stdioServer('fast', {}),
    ]);
    const fast = mcp.connection('fast');
    const slow = [mcp.connection('slow_a'), mcp.connection('slow_b')];
    const began = Date.now();
    let starting = true;
    const start = mcp.start().finally(() => {
      starting = false;
    });
    await waitFor(() => fast?.connected === true || !starting, 60_000, 'the fast server to connect');
    // The fast server is ready, with its tools, while the slow ones are not.
    expect(fast?.connected).toBe(true);
    expect(fast?.toolbox.tools.map((tool) => tool.name)).toContain('echo');
    expect(slow.map((connection) => connection?.connected)).toEqual([false, false]);
    expect(starting).toBe(true);
    await start;
    const tookMs = Date.now() - began;
    expect(mcp.connections.map((connection) => connection.connected)).toEqual([true, true, true]);
    expect(tookMs).toBeGreaterThanOrEqual(delayMs);
    expect(tookMs).toBeLessThan(2 * delayMs);
  });

  it('close ends the process of every stdio server', async () => {
    const pids = pidFile();
    const mcp = servers([
      stdioServer('one', { MCP_PID_FILE: pids }),
      stdioServer('two', { MCP_PID_FILE: pids }),
    ]);
    await mcp.start();
    const started = mcp.connections.map((connection) => connection.pid ?? 0);
    expect(started.every((pid) => pid > 0 && alive(pid))).toBe(true);
    expect(pidsIn(pids).sort()).toEqual([...started].sort());
    await mcp.close();
    expect(started.filter(alive)).toEqual([]);
  });
});

describe('a worker process with a stdio MCP server', () => {
  it("ends the server's process when the worker stops on SIGTERM", async () => {
    const pids = pidFile();
    const harness = new Harness({
      script: { default: { text: 'done' } },
      config: {
        mcp_servers: [
          {
            name: 'everything',
            command: process.execPath,
            args: [everythingStdio],
            env: { MCP_PID_FILE: pids },
          },
        ],
      },
    });
    cleanups.push(() => harness.close());
    const worker = harness.spawnWorker();
    await waitFor(() => worker.output().includes('worker started'), 60_000, 'the worker to start');
    expect(worker.output()).toContain('MCP server connected');
    const [server] = pidsIn(pids);
    expect(server).toBeGreaterThan(0);
    expect(alive(server ?? 0)).toBe(true);

    worker.child.kill('SIGTERM');
    const exit = await waitForExit(worker, 60_000);
    expect(exit.code, worker.output()).toBe(0);
    // Gone when the worker has exited: not left behind for the machine to reap.
    expect(alive(server ?? 0), worker.output()).toBe(false);
    expect(pidsIn(pids)).toHaveLength(1);
  });
});

describe('a worker process stopped while a stdio MCP server is still starting', () => {
  it('leaves no server process behind', async () => {
    const pids = pidFile();
    const harness = new Harness({
      script: { default: { text: 'done' } },
      config: {
        mcp_servers: [
          {
            name: 'slow',
            command: process.execPath,
            args: [everythingStdio],
            env: { MCP_PID_FILE: pids, MCP_START_DELAY_MS: '5000' },
          },
        ],
      },
    });
    cleanups.push(() => harness.close());
    const worker = harness.spawnWorker();
    await waitFor(() => pidsIn(pids).length === 1, 60_000, 'the server process to start');
    const [server] = pidsIn(pids);
    expect(worker.output()).not.toContain('worker started');
    worker.child.kill('SIGTERM');
    const exit = await waitForExit(worker, 60_000);
    expect(exit.code, worker.output()).toBe(0);
    // Ended before the worker exited, although it never finished starting: no orphan keeps running.
    expect(alive(server ?? 0), worker.output()).toBe(false);
    expect(worker.output()).toContain('MCP server connection given up: the worker is shutting down');
  });
});
