import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { crashPointNames } from '../../src/workflows/crash-points.js';

const moduleUrl = new URL('../../src/workflows/crash-points.ts', import.meta.url).href;
const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a child that imports the crash-points module with RATCHET_CRASH_AT set, then reaches each of the
 * given points in order, printing `reached <n>` before each.
 */
function runChild(crashAt: string, points: readonly string[]): Promise<ChildResult> {
  const script = [
    `const { crashPoint } = await import(${JSON.stringify(moduleUrl)});`,
    `const points = ${JSON.stringify(points)};`,
    'for (const [index, point] of points.entries()) {',
    "  process.stdout.write('reached ' + (index + 1) + '\\n');",
    '  crashPoint(point);',
    '}',
    "process.stdout.write('survived\\n');",
  ].join('\n');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: projectRoot, env: { ...process.env, RATCHET_CRASH_AT: crashAt }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const failure = error as (Error & { code?: number | string; signal?: NodeJS.Signals }) | null;
        resolve({
          code: failure ? (typeof failure.code === 'number' ? failure.code : null) : 0,
          signal: failure?.signal ?? null,
          stdout,
          stderr,
        });
      },
    );
  });
}

describe('crashPointNames', () => {
  it('are unique and name a step kind (or steer: a retry or fork; schedule: a fire; capability: a wait for a worker; message: an interrupt; submit: a keyed submission; admission: a slot decision) and a place', () => {
    expect(new Set(crashPointNames).size).toBe(crashPointNames.length);
    for (const name of crashPointNames)
      expect(name).toMatch(
        /^(iteration|tool|team|steer|webhook|schedule|capability|message|submit|admission)\.[a-z_]+$/,
      );
  });
});

describe.concurrent('RATCHET_CRASH_AT', () => {
  it('an unknown point fails at import, naming it and the known points', async () => {
    const result = await runChild('iteration.before_model_call, iteration.nope', []);
    expect(result.signal).toBeNull();
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('RATCHET_CRASH_AT: unknown crash point "iteration.nope"');
    expect(result.stderr).toContain(`known: ${crashPointNames.join(', ')}`);
    expect(result.stdout).not.toContain('survived');
  });

  it.each(['tool.mid_call@abc', 'tool.mid_call@0'])('a bad count (%s) fails at import', async (spec) => {
    const result = await runChild(spec, ['tool.mid_call']);
    expect(result.signal).toBeNull();
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('needs a whole number of at least 1 after "@"');
  });

  it('an armed point kills the process with SIGKILL when reached', async () => {
    const result = await runChild('tool.mid_call', [
      'iteration.before_model_call',
      'tool.mid_call',
      'tool.mid_call',
    ]);
    expect(result.signal).toBe('SIGKILL');
    expect(result.stdout).toBe('reached 1\nreached 2\n');
    expect(result.stderr).toContain('crash point tool.mid_call reached, SIGKILL');
  });

  it('point@N crashes the N-th time the point is reached', async () => {
    const result = await runChild('iteration.after_commit@3', Array(5).fill('iteration.after_commit'));
    expect(result.signal).toBe('SIGKILL');
    expect(result.stdout).toBe('reached 1\nreached 2\nreached 3\n');
  });

  it('several points may be armed; the first reached kills', async () => {
    const result = await runChild(' tool.before_commit , tool.after_commit@2', [
      'tool.after_commit',
      'tool.before_intent',
      'tool.before_commit',
    ]);
    expect(result.signal).toBe('SIGKILL');
    expect(result.stdout).toBe('reached 1\nreached 2\nreached 3\n');
    expect(result.stderr).toContain('crash point tool.before_commit reached');
  });

  it('points that are not armed, or an empty setting, change nothing', async () => {
    const [armedElsewhere, empty] = await Promise.all([
      runChild('tool.after_commit', ['iteration.before_model_call', 'tool.mid_call']),
      runChild('', [...crashPointNames]),
    ]);
    for (const result of [armedElsewhere, empty]) {
      expect(result.signal).toBeNull();
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('survived');
    }
  });
});
