import { spawnSync } from 'node:child_process';
import { unsupportedNodeMessage } from '../../src/worker/node-version.js';

/**
 * The programs the suite drives besides Node and Redis. Checked once before any test runs, so a machine that
 * lacks one fails with a line naming what to install instead of dozens of unrelated-looking failures.
 */
const programs = [
  { command: 'git', args: ['--version'], why: 'the git toolbox tests', debian: 'git' },
  { command: 'bwrap', args: ['--version'], why: 'the exec toolbox sandbox tests', debian: 'bubblewrap' },
  {
    command: 'redis-server',
    args: ['--version'],
    why: 'tests that restart Redis or build a cluster',
    debian: 'redis-server',
  },
  { command: 'redis-cli', args: ['--version'], why: 'the Redis Cluster tests', debian: 'redis-tools' },
  { command: 'promtool', args: ['--version'], why: 'the alert rules tests', debian: 'prometheus' },
];

export function missingPrerequisites(): string[] {
  const problems: string[] = [];
  const node = unsupportedNodeMessage(process.versions.node);
  if (node !== undefined) problems.push(`${node} (.nvmrc names the version CI uses)`);
  for (const program of programs) {
    const result = spawnSync(program.command, program.args, { stdio: 'ignore' });
    if (result.error || result.status !== 0) {
      problems.push(
        `${program.command} not found on PATH (${program.why}): apt-get install ${program.debian}`,
      );
    }
  }
  return problems;
}

export default function checkPrerequisites(): void {
  const problems = missingPrerequisites();
  if (problems.length > 0) {
    throw new Error(
      `The test suite cannot run on this machine:\n  - ${problems.join('\n  - ')}\n` +
        '(`bash .ci/run` installs all of them.)',
    );
  }
}
