import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeEach, describe, expect, it } from 'vitest';
import { execToolbox } from '../../src/tools/builtin/exec-toolbox.js';
import type { ToolBox } from '../../src/tools/index.js';
import {
  callError,
  callOk,
  callTool,
  toolContext,
  toolsSettings,
  useTemporaryDirectory,
} from '../helpers/tool-calls.js';

const directory = useTemporaryDirectory('exec');
let exec: ToolBox;

function toolbox(section: Record<string, unknown> = {}): ToolBox {
  const settings = toolsSettings({
    exec: { enabled: true, commands: ['node', 'echo', 'ls'], ...section },
  }).exec;
  return execToolbox({ workspace: directory.path, settings });
}

/** Running (a killed process whose parent died may stay a zombie until init reaps it: that is not alive). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
  return !/^\d+ \(.*\) Z/.test(stat);
}

/** A node script that starts a grandchild `sleep`, writes its pid, then waits. */
const spawnsGrandchild =
  "const c=require('child_process').spawn('sleep',['30'],{stdio:'ignore'});" +
  "require('fs').writeFileSync('grandchild.pid',String(c.pid));setInterval(()=>{},1000)";

beforeEach(() => {
  exec = toolbox();
});

describe('exec: running allow-listed commands', () => {
  it('returns the exit code, stdout and stderr', async () => {
    const result = await callOk(exec, 'run_command', {
      command: 'node',
      args: ['-e', "console.log('out'); console.error('err'); process.exit(3)"],
    });
    expect(result).toEqual({ exit_code: 3, stdout: 'out\n', stderr: 'err\n' });
  });

  it('passes arguments literally, with no shell to interpret them', async () => {
    const result = await callOk(exec, 'run_command', {
      command: 'echo',
      args: ['a; rm -rf x', '$(whoami)', '*'],
    });
    expect(result.stdout).toBe('a; rm -rf x $(whoami) *\n');
  });

  it('runs in the workspace, or a directory of it, and refuses a cwd outside', async () => {
    const here = await callOk(exec, 'run_command', {
      command: 'node',
      args: ['-e', 'console.log(process.cwd())'],
    });
    expect(here.stdout.trim()).toBe(directory.path);
    expect(await callError(exec, 'run_command', { command: 'ls', cwd: '..' })).toContain(
      'cwd: ".." is outside the workspace',
    );
  });

  it('does not hand the worker environment (secrets) to the command', async () => {
    process.env.RATCHET_TEST_SECRET = 's3cret';
    try {
      const result = await callOk(exec, 'run_command', {
        command: 'node',
        args: ['-e', "console.log(process.env.RATCHET_TEST_SECRET ?? 'none')"],
      });
      expect(result.stdout).toBe('none\n');
    } finally {
      delete process.env.RATCHET_TEST_SECRET;
    }
  });

  it('is declared not idempotent', () => {
    expect(exec.tools[0]?.idempotent).toBe(false);
  });
});

describe('exec: refusals and limits', () => {
  it('refuses a command that is not allow-listed, and a path to a listed one', async () => {
    expect(await callError(exec, 'run_command', { command: 'rm', args: ['-rf', '.'] })).toContain(
      'command: "rm" is not allowed (tools.exec.commands allows: node, echo, ls)',
    );
    expect(await callError(exec, 'run_command', { command: '/bin/ls' })).toContain(
      '"/bin/ls" is not allowed',
    );
  });

  it('refuses everything while disabled', async () => {
    const disabled = execToolbox({ workspace: directory.path, settings: toolsSettings().exec });
    expect(await callError(disabled, 'run_command', { command: 'ls' })).toContain(
      'set tools.exec.enabled: true',
    );
  });

  it('kills the whole process group on timeout', async () => {
    const started = Date.now();
    const result = await callOk(toolbox({ timeout_ms: 500 }), 'run_command', {
      command: 'node',
      args: ['-e', spawnsGrandchild],
    });
    expect(result).toMatchObject({ exit_code: null, signal: 'SIGKILL', timed_out: true });
    expect(Date.now() - started).toBeLessThan(10_000);
    const grandchild = Number(readFileSync(join(directory.path, 'grandchild.pid'), 'utf8'));
    await sleep(100);
    expect(isAlive(grandchild)).toBe(false);
  });

  it('cuts output at max_output_bytes and stops the process', async () => {
    const result = await callOk(toolbox({ max_output_bytes: 1000 }), 'run_command', {
      command: 'node',
      args: ['-e', "setInterval(() => process.stdout.write('x'.repeat(10000)), 1)"],
    });
    expect(result.stdout).toBe('x'.repeat(1000));
    expect(result).toMatchObject({ truncated: true, signal: 'SIGKILL' });
    expect(result.note).toContain('tools.exec.max_output_bytes');
  });

  it('an abort kills the process group and propagates', async () => {
    const controller = new AbortController();
    const call = callTool(
      exec,
      'run_command',
      { command: 'node', args: ['-e', spawnsGrandchild] },
      toolContext({ signal: controller.signal }),
    );
    const pidFile = join(directory.path, 'grandchild.pid');
    while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8') === '') await sleep(20);
    controller.abort(new Error('run cancelled'));
    await expect(call).rejects.toThrow('run cancelled');
    await sleep(100);
    expect(isAlive(Number(readFileSync(pidFile, 'utf8')))).toBe(false);
  });
});

describe('exec: with a shell', () => {
  it('runs a command line whose first word is allow-listed, and refuses others', async () => {
    const shell = toolbox({ shell: true });
    expect((await callOk(shell, 'run_command', { command: 'echo a && echo b' })).stdout).toBe('a\nb\n');
    expect(await callError(shell, 'run_command', { command: 'rm -rf /tmp/x' })).toContain(
      '"rm" is not allowed',
    );
  });
});
