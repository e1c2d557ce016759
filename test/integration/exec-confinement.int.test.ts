import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toolResultsOf } from '../../src/chat/index.js';
import type { Script } from '../../src/models/index.js';
import { Harness } from '../helpers/harness.js';

/** What a provider key in the worker's environment looks like; it must never reach a tool result. */
const secret = 'sk-ratchet-test-secret-5f0c2a';

let harness: Harness | undefined;
beforeEach(() => {
  // Not named like a secret (*_SECRET, *_KEY …): the worker would then redact it from tool results, and
  // these tests would pass without the sandbox. They test the sandbox alone.
  process.env.RATCHET_TEST_PLANTED_VALUE = secret;
});
afterEach(async () => {
  delete process.env.RATCHET_TEST_PLANTED_VALUE;
  await harness?.close();
  harness = undefined;
});

function execHarness(script: Script, exec: Record<string, unknown>): Harness {
  const created = new Harness({
    script,
    agent: { toolboxes: ['exec'] },
    config: { tools: { workspace: 'workspace', exec: { enabled: true, ...exec } } },
  });
  // A secret file next to the config, and a link in the workspace pointing at it.
  writeFileSync(join(created.dir, 'provider-keys.txt'), secret);
  mkdirSync(join(created.dir, 'workspace'), { recursive: true });
  writeFileSync(join(created.dir, 'workspace', 'readme.txt'), 'hello from the workspace\n');
  symlinkSync(join(created.dir, 'provider-keys.txt'), join(created.dir, 'workspace', 'x'));
  return created;
}

async function toolResults(started: Harness, input: string) {
  await started.startWorker();
  const { runId, sessionId } = await started.engine.startRun({ input });
  const run = await started.engine.waitForRun(runId, { timeoutMs: 30_000 });
  expect(run.status).toBe('completed');
  const chat = await started.transcript(sessionId);
  return chat.flatMap((message) => toolResultsOf(message));
}

describe('exec: a hostile model cannot read outside the workspace', () => {
  it('every path argument leading out is refused, naming it; a workspace file is read', async () => {
    // The worker runs in this process: its environment holds the secret, /proc/<pid>/environ shows it.
    const calls = [
      ['cat', `/proc/${process.pid}/environ`],
      ['cat', '/proc/self/environ'],
      ['cat', '../ratchet.json'],
      ['cat', '../provider-keys.txt'],
      ['cat', '/etc/passwd'],
      ['cat', 'x'],
      ['cat', 'readme.txt'],
    ];
    harness = execHarness(
      {
        replies: [
          {
            tool_calls: calls.map(([command, path]) => ({
              name: 'run_command',
              arguments: { command, args: [path] },
            })),
          },
          { text: 'done' },
        ],
      },
      { commands: ['cat'] },
    );
    const results = await toolResults(harness, 'read the secrets');
    expect(results).toHaveLength(calls.length);
    for (const result of results) expect(result.content).not.toContain(secret);
    expect(results.slice(0, 6).map((result) => result.is_error)).toEqual(Array(6).fill(true));
    expect(results[0]?.content).toContain(`args[0]: "/proc/${process.pid}/environ" is outside the workspace`);
    expect(results[2]?.content).toContain('args[0]: "../ratchet.json" is outside the workspace');
    expect(results[4]?.content).toContain('args[0]: "/etc/passwd" is outside the workspace');
    expect(results[5]?.content).toContain('args[0]: "x" leads outside the workspace through a symbolic link');
    expect(results[6]).toMatchObject({ is_error: false });
    expect(JSON.parse(results[6]?.content ?? '')).toMatchObject({ stdout: 'hello from the workspace\n' });
  });

  it('with a shell, the sandbox shows no host process, no secret file and no host /tmp', async () => {
    const lines = [
      "sh -c 'cat /proc/*/environ'",
      `cat /proc/${process.pid}/environ`,
      'cat ../provider-keys.txt x; cat /root/.ssh/* /etc/passwd',
      "sh -c 'ls /tmp /home /root; echo listed'",
      'cat readme.txt',
    ];
    harness = execHarness(
      {
        replies: [
          { tool_calls: lines.map((command) => ({ name: 'run_command', arguments: { command } })) },
          { text: 'done' },
        ],
      },
      { commands: ['sh', 'cat'], shell: true },
    );
    const results = await toolResults(harness, 'read the secrets');
    expect(results).toHaveLength(lines.length);
    for (const result of results) {
      expect(result.content).not.toContain(secret);
      expect(result).toMatchObject({ is_error: false });
    }
    const outputs = results.map((result) => JSON.parse(result.content));
    expect(outputs[1].stderr).toContain('No such file or directory');
    expect(outputs[2].stdout).toBe('');
    // The host's /tmp holds this test's directory; the sandbox's /tmp is empty but for the workspace path.
    expect(outputs[3].stdout).not.toContain('provider-keys');
    expect(outputs[3].stdout).toContain('listed');
    expect(outputs[4].stdout).toBe('hello from the workspace\n');
  });

  it('a worker in its own process: no process of the sandbox shows its environment', async () => {
    harness = execHarness(
      {
        replies: [
          {
            tool_calls: [
              { name: 'run_command', arguments: { command: "sh -c 'cat /proc/*/environ; ls /proc'" } },
            ],
          },
          { text: 'done' },
        ],
      },
      { commands: ['sh'], shell: true },
    );
    // The spawned worker inherits this process's environment, the secret included.
    const worker = harness.spawnWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'read the secrets' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    const [result] = (await harness.transcript(sessionId)).flatMap((message) => toolResultsOf(message));
    expect(result).toMatchObject({ is_error: false });
    expect(result?.content).not.toContain(secret);
    const { stdout } = JSON.parse(result?.content ?? '');
    expect(stdout).toContain('PATH=');
    expect(stdout.split('\n')).not.toContain(String(worker.child.pid));
  });
});
