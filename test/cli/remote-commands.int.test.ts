import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import {
  type CliProcess,
  type CliWorld,
  createWorld,
  invocation,
  runCli,
  spawnCli,
  startServer,
} from './cli-fixture.js';

// A user's terminal closes while a run waits for an answer; from a new terminal they find the run again,
// look at it, follow it and answer it, or cancel it: every command as a person types it, against a live API.

const askColour: Script = {
  replies: [
    {
      text: 'Let me ask.',
      tool_calls: [
        { name: 'report_progress', arguments: { message: 'choosing a colour', fraction: 0.5 } },
        { name: 'ask_user', arguments: { question: 'Which colour?', options: ['red', 'blue'] } },
      ],
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
    expect(runs.stdout).toMatch(/^RUN\s+STATUS\s+CREATED\s+ITER\s+TOKENS\s+AGENT\n/);
    expect(runs.stdout).toMatch(
      new RegExp(`${runId}\\s+waiting_input\\s+\\S+Z\\s+1\\s+[1-9]\\d*\\s+helper\\n`),
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
    expect(status.stdout).toContain('  progress    50% choosing a colour\n');
    expect(status.stdout).toContain('  question    Which colour? [red / blue]');
    expect(status.stdout).toMatch(new RegExp(`answer with: ${invocation} answer q-run_\\S+ "…"`));

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
    // Where it stands is "completed": its last report (50%) is not shown as its progress.
    expect(after.stdout).not.toContain('progress');
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
    expect(runs.stdout).toMatch(new RegExp(`${second.runId}\\s+completed\\s+\\S+\\s+2\\s+\\d+\\s+helper\\n`));
    expect(runs.stdout).toMatch(new RegExp(`${first.runId}\\s+cancelled\\s+\\S+\\s+1\\s+\\d+\\s+helper\\n`));
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

  it('says where no API answers, and that the API has no run yet', async () => {
    const { dir, url } = await serve();
    const empty = await runCli(['runs', '--url', url], { cwd: dir, env: withToken });
    expect(empty.code).toBe(0);
    expect(empty.stdout).toBe(`no runs on the API at ${url}\n`);
    const none = await runCli(['runs', '--url', url, '--status', 'failed', '--agent', 'helper'], {
      cwd: dir,
      env: withToken,
    });
    expect(none.stdout).toBe(`no runs with status failed of agent helper on the API at ${url}\n`);
    const listUnreachable = await runCli(['runs', '--url', 'http://127.0.0.1:9']);
    expect(listUnreachable.code).toBe(1);
    expect(listUnreachable.stderr).toContain('cannot reach the API at http://127.0.0.1:9');
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

/** Starts a run through the API itself (not this CLI): `ratchet runs` lists it all the same. */
async function submit(
  url: string,
  body: Record<string, unknown>,
): Promise<{ run_id: string; session_id: string }> {
  const response = await fetch(`${url}/v1/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(202);
  return (await response.json()) as { run_id: string; session_id: string };
}

/** The run ids of `ratchet runs`' table, in its order. */
function listed(stdout: string): string[] {
  return [...stdout.matchAll(/^(run_\S+)\s/gm)].map((match) => match[1] ?? '');
}

describe("ratchet runs reads the API's run list", () => {
  it('lists runs no CLI started, filters by status (repeated or comma list), agent and session, pages with --all', async () => {
    const { url } = await serve();
    const runIds: string[] = [];
    for (const input of ['first', 'second', 'third']) {
      const accepted = await submit(url, { input });
      runIds.push(accepted.run_id);
      // Each waits for its question: "red" answers one, the others stay waiting or are cancelled.
      await waitForStatus(url, accepted.run_id, 'waiting_input');
    }
    const [first, second, third] = runIds as [string, string, string];
    await fetch(`${url}/v1/sessions/${(await run(url, first)).session_id}/respond`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        question_id: ((await run(url, first)).pending_question as { id: string }).id,
        response: 'red',
      }),
    });
    expect((await run(url, first, true)).status).toBe('completed');
    await fetch(`${url}/v1/runs/${second}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    expect((await run(url, second, true)).status).toBe('cancelled');

    // From a directory that never ran anything: the API's runs, newest first.
    const all = await runCli(['runs', '--url', url], { env: withToken });
    expect(all.stderr).toBe('');
    expect(all.code).toBe(0);
    expect(listed(all.stdout)).toEqual([third, second, first]);
    expect(all.stdout).toMatch(
      new RegExp(`${first}\\s+completed\\s+\\d{4}-\\d\\d-\\d\\dT\\S+Z\\s+2\\s+[1-9]\\d*\\s+helper\\n`),
    );
    expect(all.stdout).not.toContain('more runs');

    const repeated = await runCli(['runs', '--url', url, '--status', 'completed', '--status', 'cancelled'], {
      env: withToken,
    });
    expect(listed(repeated.stdout)).toEqual([second, first]);
    const commas = await runCli(['runs', '--url', url, '--status', 'waiting_input,completed'], {
      env: withToken,
    });
    expect(listed(commas.stdout)).toEqual([third, first]);
    const byAgent = await runCli(['runs', '--url', url, '--agent', 'helper', '--limit', '2'], {
      env: withToken,
    });
    expect(listed(byAgent.stdout)).toEqual([third, second]);
    expect(byAgent.stdout).toContain(`(more runs: ${invocation} runs --all, or --limit N up to 500)`);
    const sessionId = (await run(url, second)).session_id as string;
    const bySession = await runCli(['runs', '--url', url, '--session', sessionId], { env: withToken });
    expect(bySession.stdout).toContain(`session ${sessionId} (agent helper, idle)\n`);
    expect(listed(bySession.stdout)).toEqual([second]);

    // Pages of one run each, followed to the last: every run once, in order.
    const paged = await runCli(['runs', '--url', url, '--all', '--limit', '1'], { env: withToken });
    expect(paged.code).toBe(0);
    expect(listed(paged.stdout)).toEqual([third, second, first]);
    expect(paged.stdout.match(/^RUN /gm)).toHaveLength(1);
    expect(paged.stdout).not.toContain('more runs');

    const badStatus = await runCli(['runs', '--url', url, '--status', 'done'], { env: withToken });
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toContain(
      '--status: "done" is not a run status; give one or more of queued, running',
    );
    await fetch(`${url}/v1/runs/${third}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
  });

  it('status shows the lineage of a retried run, from both sides', async () => {
    const { dir, url } = await serve();
    const { runId } = await startAndDetach(dir, url, 'Pick a colour');
    await runCli(['cancel', runId], { cwd: dir, env: withToken });
    expect((await run(url, runId, true)).status).toBe('cancelled');
    const retry = await fetch(`${url}/v1/runs/${runId}/retry`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    expect(retry.status).toBe(202);
    const retryId = ((await retry.json()) as { run_id: string }).run_id;

    const original = await runCli(['status', runId], { cwd: dir, env: withToken });
    expect(original.stdout).toContain(`  retried by  ${retryId}\n`);
    const continued = await runCli(['status', retryId, '--url', url], { env: withToken });
    expect(continued.stdout).toContain(`  retry of    ${runId}\n`);
    expect(continued.stdout).not.toContain('retried by');
    await fetch(`${url}/v1/runs/${retryId}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
  });
});

async function waitForStatus(url: string, runId: string, status: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await run(url, runId)).status !== status) {
    if (Date.now() > deadline) throw new Error(`run ${runId} never reached ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
