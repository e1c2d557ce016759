import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execToolbox } from '../../src/tools/builtin/exec/exec-toolbox.js';
import type { ToolBox } from '../../src/tools/index.js';
import { isAlive } from '../helpers/process-tree.js';
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

/**
 * Host processes whose working directory is `directory` or below. Inside the sandbox a process sees its own
 * PID namespace, so the pid it writes means nothing on the host: this finds its processes from outside.
 */
function processesIn(directory: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const cwd = readlinkSync(`/proc/${pid}/cwd`);
        return (cwd === directory || cwd.startsWith(`${directory}/`)) && isAlive(Number(pid));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** A node script that starts a grandchild `sleep`, writes its pid, then waits. */
/** Polls a condition: a killed process disappears once reaped, which takes longer on a busy machine. */
async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

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

  it('kills the whole process group on timeout (unsandboxed: the grandchild pid is a host pid)', async () => {
    const started = Date.now();
    const result = await callOk(toolbox({ timeout_ms: 500, sandbox: 'none' }), 'run_command', {
      command: 'node',
      args: ['-e', spawnsGrandchild],
    });
    expect(result).toMatchObject({ exit_code: null, signal: 'SIGKILL', timed_out: true });
    // Cut at the 500 ms timeout (the command would run for ever); generous, as the machine may be busy.
    expect(Date.now() - started).toBeLessThan(20_000);
    const grandchild = Number(readFileSync(join(directory.path, 'grandchild.pid'), 'utf8'));
    // A killed process is gone once the kernel has reaped it: soon, but later on a busy machine.
    await waitFor(() => !isAlive(grandchild), 10_000, 'the grandchild to be gone');
  });

  it('kills the whole sandbox on timeout, grandchildren included', async () => {
    const result = await callOk(toolbox({ timeout_ms: 1000 }), 'run_command', {
      command: 'node',
      args: ['-e', spawnsGrandchild],
    });
    expect(result).toMatchObject({ exit_code: null, signal: 'SIGKILL', timed_out: true });
    // The grandchild did start (it wrote its pid), and nothing of the sandbox is left running.
    expect(readFileSync(join(directory.path, 'grandchild.pid'), 'utf8')).not.toBe('');
    await waitFor(() => processesIn(directory.path).length === 0, 10_000, 'the sandbox to be empty');
    expect(processesIn(directory.path)).toEqual([]);
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
    expect(processesIn(directory.path).length).toBeGreaterThan(0);
    controller.abort(new Error('run cancelled'));
    await expect(call).rejects.toThrow('run cancelled');
    await waitFor(() => processesIn(directory.path).length === 0, 10_000, 'the sandbox to be empty');
    expect(processesIn(directory.path)).toEqual([]);
  });
});

describe('exec: the sandbox', () => {
  const secret = 'sk-test-exec-0123456789';
  beforeEach(() => {
    process.env.RATCHET_TEST_SECRET = secret;
  });
  afterEach(() => {
    delete process.env.RATCHET_TEST_SECRET;
  });

  it("cannot read the worker's environment through /proc, even from a shell", async () => {
    const shell = toolbox({ shell: true, commands: ['sh', 'cat', 'ls'] });
    const result = await callOk(shell, 'run_command', {
      command: `cat /proc/${process.pid}/environ /proc/*/environ /proc/self/environ; ls /proc`,
    });
    expect(JSON.stringify(result)).not.toContain(secret);
    expect(result.stderr).toContain(`/proc/${process.pid}/environ: No such file or directory`);
  });

  it('shows only the workspace and system directories: not /root, /home, /etc/passwd or the host /tmp', async () => {
    writeFileSync(join(directory.path, 'here.txt'), 'inside');
    const outside = join(dirname(directory.path), `outside-${process.pid}.txt`);
    writeFileSync(outside, secret);
    try {
      const shell = toolbox({ shell: true, commands: ['ls', 'cat'] });
      const listing = await callOk(shell, 'run_command', { command: 'ls / /etc; cat here.txt' });
      expect(listing.stdout).toContain('inside');
      expect(listing.stdout).not.toMatch(/^(root|home|work|passwd|shadow)$/m);
      const escaped = await callOk(shell, 'run_command', {
        command: `cat ${outside} /etc/passwd ~/.ssh/id_rsa`,
      });
      expect(JSON.stringify(escaped)).not.toContain(secret);
      expect(escaped.stdout).toBe('');
    } finally {
      rmSync(outside, { force: true });
    }
  });

  it('writes in the workspace, and the network is unreachable', async () => {
    const result = await callOk(exec, 'run_command', {
      command: 'node',
      args: [
        '-e',
        "require('fs').writeFileSync('made.txt','ok');" +
          "require('net').connect(6379,'127.0.0.1').on('connect',()=>console.log('connected')).on('error',e=>console.log(e.code))",
      ],
    });
    expect(readFileSync(join(directory.path, 'made.txt'), 'utf8')).toBe('ok');
    expect(result.stdout).not.toContain('connected');
  });

  it('reports a sandbox bubblewrap cannot set up as an error, not as the command failing', async () => {
    const broken = toolbox({ read_only_paths: ['/nonexistent-ratchet-path'] });
    const error = await callError(broken, 'run_command', { command: 'ls' });
    expect(error).toContain('bubblewrap could not set the sandbox up');
    expect(error).toContain('/nonexistent-ratchet-path');
    expect(error).toContain('tools.exec.sandbox');
  });

  it('refuses to run, with an error naming tools.exec.sandbox, when bubblewrap is missing', async () => {
    const settings = toolsSettings({ exec: { enabled: true, commands: ['ls'] } }).exec;
    const missing = execToolbox({ workspace: directory.path, settings, bwrap: '/nonexistent/bwrap' });
    const error = await callError(missing, 'run_command', { command: 'ls' });
    expect(error).toContain('tools.exec.sandbox');
    expect(error).toContain('apt-get install bubblewrap');
  });
});

describe('exec: path arguments stay in the workspace', () => {
  const cat = () => toolbox({ commands: ['cat', 'ls'] });

  it('refuses absolute paths, .. and ~ outside the workspace, naming the argument', async () => {
    expect(
      await callError(cat(), 'run_command', { command: 'cat', args: [`/proc/${process.pid}/environ`] }),
    ).toContain('args[0]');
    expect(
      await callError(cat(), 'run_command', { command: 'cat', args: ['-n', '../ratchet.json'] }),
    ).toContain('args[1]: "../ratchet.json" is outside the workspace');
    expect(await callError(cat(), 'run_command', { command: 'cat', args: ['/etc/passwd'] })).toContain(
      'args[0]: "/etc/passwd" is outside the workspace',
    );
    expect(await callError(cat(), 'run_command', { command: 'cat', args: ['~/.ssh/id_rsa'] })).toContain(
      'args[0]: "~/.ssh/id_rsa" names a home directory',
    );
    expect(await callError(cat(), 'run_command', { command: 'ls', args: ['--directory=/root'] })).toContain(
      'args[0]',
    );
  });

  it('refuses a symbolic link of the workspace that leads outside', async () => {
    symlinkSync('/etc/passwd', join(directory.path, 'x'));
    expect(await callError(cat(), 'run_command', { command: 'cat', args: ['x'] })).toContain(
      'args[0]: "x" leads outside the workspace through a symbolic link',
    );
  });

  it('accepts paths inside, relative to cwd, and arguments that are not paths', async () => {
    mkdirSync(join(directory.path, 'sub'));
    writeFileSync(join(directory.path, 'sub', 'a.txt'), 'A');
    writeFileSync(join(directory.path, 'b.txt'), 'B');
    const result = await callOk(cat(), 'run_command', {
      command: 'cat',
      args: ['-u', 'a.txt', '../b.txt', join(directory.path, 'b.txt')],
      cwd: 'sub',
    });
    expect(result.stdout).toBe('ABB');
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
