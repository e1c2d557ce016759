import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { type CliProcess, type CliWorld, createWorld, runCli, spawnCli, startServer } from './cli-fixture.js';

// A user's terminal closes while a run waits for an answer; from a new terminal they find the run again,
// look at it, follow it and answer it, or cancel it: every command as a person types it, against a live API.

const askColour: Script = {
  replies: [
    {
      text: 'Let me ask.',
      tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?', options: ['red', 'blue'] } }],
    },
    { text: 'Red it is.' },
  ],
  rules: [{ when: { role: 'tool', contains: 'blue' }, reply: { text: 'Blue it is.' } }],
};

const token = 'cli-secret-token';
let world: CliWorld | undefined;
let server: Awaited<ReturnType<typeof startServer>> | undefined;
const started: CliProcess[] = [];
afterEach(async () => {
  for (const cli of started.splice(0)) await cli.kill();
  await server?.close();
  await world?.close();
  server = undefined;
  world = undefined;
});

async function serve() {
  world = createWorld({ script: askColour, redisUrl: inject('redisUrl'), tokens: [token] });
  server = await startServer(world);
  return { dir: world.dir, url: server.api.url };
}

const withToken = { RATCHET_TOKEN: token };

/** `ratchet run` until its question is on the prompt, then its terminal closes (the process is killed). */
async function startAndDetach(
  dir: string,
  url: string,
  task: string,
): Promise<{ runId: string; sessionId: string }> {
  const cli = spawnCli(['run', '--url', url, task], { cwd: dir, env: withToken });
  started.push(cli);
  await cli.waitFor('your answer (1-2 or text, Enter for "red"): ');
  await cli.kill();
  const match = /^run (run_\S+) \(session (ses_\S+)\)/.exec(cli.stdout());
  if (!match?.[1] || !match[2]) throw new Error(`no run id in:\n${cli.stdout()}`);
  return { runId: match[1], sessionId: match[2] };
}

async function run(url: string, runId: string, wait = false): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}/v1/runs/${runId}${wait ? '/wait?timeout_s=60' : ''}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return (await response.json()) as Record<string, unknown>;
}

describe('after the terminal that started a run closed', () => {
  it('runs lists it, status shows it waiting, attach follows it and answers from stdin', async () => {
    const { dir, url } = await serve();
    const { runId, sessionId } = await startAndDetach(dir, url, 'Pick a colour');

    // The history remembers the API: no --url needed from the same directory.
    const runs = await runCli(['runs'], { cwd: dir, env: withToken });
    expect(runs.stderr).toBe('');
    expect(runs.code).toBe(0);
    expect(runs.stdout).toMatch(/^RUN\s+STATUS\s+AGENT\s+STARTED\s+TASK\n/);
    expect(runs.stdout).toMatch(
      new RegExp(`${runId}\\s+waiting_input \\(question\\)\\s+helper\\s+\\S+Z\\s+Pick a colour`),
    );
    const history = readFileSync(join(dir, '.ratchet/runs.jsonl'), 'utf8');
    expect(history).not.toContain(token);

    const bySession = await runCli(['runs', '--session', sessionId, '--url', url], { env: withToken });
    expect(bySession.code).toBe(0);
    expect(bySession.stdout).toContain(`session ${sessionId} (agent helper, active)`);
    expect(bySession.stdout).toContain(runId);

    const status = await runCli(['status', runId], { cwd: dir, env: withToken });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`run ${runId} (session ${sessionId})`);
    expect(status.stdout).toMatch(/ {2}status {6}waiting_input\n/);
    expect(status.stdout).toMatch(/ {2}agent {7}helper\n/);
    expect(status.stdout).toMatch(/ {2}iterations {2}1\n/);
    expect(status.stdout).toMatch(/ {2}tokens {6}\d+ in, \d+ out/);
    expect(status.stdout).toContain('  question    Which colour? [red / blue]');
    expect(status.stdout).toMatch(/answer with: ratchet answer q-run_\S+ "…"/);

    const attach = await runCli(['attach', runId], { cwd: dir, env: withToken, stdin: 'blue\n' });
    expect(attach.stderr).toBe('');
    expect(attach.code).toBe(0);
    expect(attach.stdout).toContain(`run ${runId} (session ${sessionId}) on ${url}: waiting_input`);
    // What happened while detached, then the question still waiting, asked once and answered.
    expect(attach.stdout).toContain('▶ helper starts: Pick a colour');
    expect(attach.stdout).toContain('❓ helper asks: Which colour?');
    expect(attach.stdout.split('your answer (1-2').length - 1).toBe(1);
    expect(attach.stdout).toContain('↳ answered: blue');
    expect(attach.stdout.endsWith('\nanswer: Blue it is.\n')).toBe(true);

    const after = await runCli(['status', runId], { cwd: dir, env: withToken });
    expect(after.stdout).toMatch(/ {2}status {6}completed\n/);
    expect(after.stdout).toContain('  answer      Blue it is.');
    // Attaching to a finished run shows its end and exits as run would.
    const late = await runCli(['attach', runId], { cwd: dir, env: withToken });
    expect(late.code).toBe(0);
    expect(late.stdout).toContain(': completed\n\nanswer: Blue it is.');
  });

  it('attach asks only the question still waiting, not the ones answered before it in the backlog', async () => {
    const twoQuestions: Script = {
      replies: [
        {
          text: 'First the colour.',
          tool_calls: [
            { name: 'ask_user', arguments: { question: 'Which colour?', options: ['red', 'blue'] } },
          ],
        },
        {
          text: 'Now the size.',
          tool_calls: [
            { name: 'ask_user', arguments: { question: 'Which size?', options: ['small', 'large'] } },
          ],
        },
        { text: 'Noted both.' },
      ],
    };
    world = createWorld({ script: twoQuestions, redisUrl: inject('redisUrl'), tokens: [token] });
    server = await startServer(world);
    const { dir } = world;
    const { url } = server.api;
    const cli = spawnCli(['run', '--url', url, 'Colour and size'], { cwd: dir, env: withToken });
    started.push(cli);
    await cli.waitFor('Enter for "red"): ');
    cli.child.stdin?.write('blue\n');
    await cli.waitFor('Enter for "small"): ');
    await cli.kill();
    const runId = /^run (run_\S+) /.exec(cli.stdout())?.[1] ?? '';

    const attach = await runCli(['attach', runId], { cwd: dir, env: withToken, stdin: 'large\n' });
    expect(attach.stderr).toBe('');
    expect(attach.code).toBe(0);
    expect(attach.stdout).toContain('❓ helper asks: Which colour?');
    expect(attach.stdout).toContain('↳ answered: blue');
    expect(attach.stdout).not.toContain('Enter for "red"');
    expect(attach.stdout).toContain('your answer (1-2 or text, Enter for "small"): large');
    expect(attach.stdout).toContain('↳ answered: large');
    expect(attach.stdout.endsWith('\nanswer: Noted both.\n')).toBe(true);
  });

  it('cancel stops a waiting run; answer answers one without a prompt', async () => {
    const { dir, url } = await serve();
    const first = await startAndDetach(dir, url, 'First');
    const second = await startAndDetach(dir, url, 'Second');

    const cancel = await runCli(['cancel', first.runId], { cwd: dir, env: withToken });
    expect(cancel.stderr).toBe('');
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toContain(`cancelling run ${first.runId}`);
    expect((await run(url, first.runId, true)).status).toBe('cancelled');

    // By run id: its one waiting question; "2" picks the second option, as at the prompt.
    const answer = await runCli(['answer', second.runId, '2'], { cwd: dir, env: withToken });
    expect(answer.stderr).toBe('');
    expect(answer.code).toBe(0);
    expect(answer.stdout).toMatch(
      new RegExp(`^answered q-${second.runId}-\\S+ \\(run ${second.runId}\\): blue\\n`),
    );
    const finished = await run(url, second.runId, true);
    expect(finished.status).toBe('completed');
    expect(finished.result).toBe('Blue it is.');

    const again = await runCli(['answer', second.runId, 'red'], { cwd: dir, env: withToken });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('no question is waiting in run');

    const runs = await runCli(['runs'], { cwd: dir, env: withToken });
    expect(runs.stdout).toMatch(new RegExp(`${second.runId}\\s+completed\\s+helper[^\\n]+Second\\n`));
    expect(runs.stdout).toMatch(new RegExp(`${first.runId}\\s+cancelled\\s+helper[^\\n]+First\\n`));
    // Newest first.
    expect(runs.stdout.indexOf(second.runId)).toBeLessThan(runs.stdout.indexOf(first.runId));
  });

  it('answers by question id, and the API refuses a command without the token (exit 1)', async () => {
    const { dir, url } = await serve();
    const { runId } = await startAndDetach(dir, url, 'Pick a colour');
    const view = await run(url, runId);
    const questionId = (view.pending_question as { id: string }).id;

    const refused = await runCli(['status', runId], { cwd: dir, env: { RATCHET_TOKEN: '' } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^unauthorized: /);

    const answer = await runCli(['answer', questionId, 'red', '--url', url, '--token', token], { cwd: dir });
    expect(answer.code).toBe(0);
    expect((await run(url, runId, true)).result).toBe('Red it is.');
  });

  it('says where no API answers, and that nothing was started here yet', async () => {
    const { dir } = await serve();
    const empty = await runCli(['runs'], { cwd: dir });
    expect(empty.code).toBe(0);
    expect(empty.stdout).toContain('no runs started from this directory yet');
    const unreachable = await runCli([
      'status',
      'run_0000000000000000_0000000000',
      '--url',
      'http://127.0.0.1:9',
    ]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('cannot reach the API at http://127.0.0.1:9');
  });
});
