import { afterEach, describe, expect, inject, it } from 'vitest';
import { printable } from '../../src/cli/terminal.js';
import type { Script } from '../../src/models/index.js';
import { type CliWorld, createWorld, runCli, spawnCli, startServer } from './cli-fixture.js';

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

let world: CliWorld | undefined;
let server: Awaited<ReturnType<typeof startServer>> | undefined;
afterEach(async () => {
  await server?.close();
  await world?.close();
  server = undefined;
  world = undefined;
});

async function serve(script: Script, options: { tokens?: string[] } = {}) {
  world = createWorld({ script, redisUrl: inject('redisUrl'), ...options });
  server = await startServer(world);
  return { world, url: server.api.url };
}

async function runStatus(url: string, runId: string, token?: string): Promise<string> {
  const response = await fetch(`${url}/v1/runs/${runId}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  return ((await response.json()) as { status: string }).status;
}

describe('ratchet run --url (against a live API)', () => {
  it('streams the run, answers the question from piped stdin, prints the answer, exits 0', async () => {
    const { url } = await serve(askColour);
    const { code, stdout, stderr } = await runCli(['run', '--url', url, 'Pick a colour'], {
      stdin: 'blue\n',
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^run run_\S+ \(session ses_\S+\) on http:\/\/127\.0\.0\.1:\d+\n/);
    expect(stdout).toContain('▶ helper starts: Pick a colour');
    expect(stdout).toContain('🤖 helper: Let me ask.');
    expect(stdout).toContain('❓ helper asks: Which colour?\n     1) red  2) blue');
    expect(stdout).toContain('your answer (1-2 or text, Enter for "red"): blue');
    expect(stdout).toContain('↳ answered: blue');
    expect(stdout).toMatch(/✔ completed after 2 iterations/);
    expect(stdout.endsWith('\nanswer: Blue it is.\n')).toBe(true);
  });

  it("prints a hostile model's escape sequences as visible symbols, never to the terminal raw", async () => {
    // Retitle the window (OSC 0), clear the screen (CSI 2J), a forged link (OSC 8), a bidi override, DEL.
    const hostile =
      '\u001b]0;pwned\u0007\u001b[2Jclick \u001b]8;;http://evil.example/\u001b\\here\u202e\u007f';
    const { url } = await serve({
      replies: [
        {
          text: hostile,
          tool_calls: [{ name: 'ask_user', arguments: { question: `${hostile}?`, options: [hostile] } }],
        },
        { text: hostile },
      ],
    });
    const { code, stdout } = await runCli(['run', '--url', url, 'Say something'], { stdin: '1\n' });
    expect(code).toBe(0);
    expect(stdout).toBe(printable(stdout));
    expect(stdout).toContain('␛]0;pwned␇␛[2Jclick ␛]8;;http://evil.example/␛\\here\ufffd␡');
    expect(stdout).toContain('\nanswer: ␛]0;pwned');
  });

  it('answers with the first option when stdin ends before the question', async () => {
    const { url } = await serve(askColour);
    const { code, stdout } = await runCli(['run', '--url', url, 'Pick a colour'], { stdin: '' });
    expect(code).toBe(0);
    expect(stdout).toContain('(end of input: answering "red")');
    expect(stdout).toContain('answer: Red it is.');
  });

  it('runs the task with the agent given by --agent', async () => {
    const { url } = await serve({ default: { text: 'done' } });
    const { code, stdout, stderr } = await runCli(['run', '--url', url, '--agent', 'other', 'hi']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('▶ other starts: hi');
  });

  it('exits 1 when the run fails, and when the agent does not exist', async () => {
    const { url } = await serve({ replies: [{ fail: [{ kind: 'auth', message: 'bad key' }] }] });
    const failed = await runCli(['run', '--url', url, 'hi']);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/✘ failed \(model_auth_failed\): .*bad key/);
    expect(failed.stdout).not.toContain('answer:');
    const unknown = await runCli(['run', '--url', url, '--agent', 'nobody', 'hi']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('nobody');
  });

  it('sends the bearer token from RATCHET_TOKEN; without it the API refuses (exit 1)', async () => {
    const token = 'a-token-of-sixteen-chars-or-more';
    const { url } = await serve({ default: { text: 'done' } }, { tokens: [token] });
    const refused = await runCli(['run', '--url', url, 'hi'], { env: { RATCHET_TOKEN: '' } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/unauthorized/i);
    const accepted = await runCli(['run', '--url', url, 'hi'], { env: { RATCHET_TOKEN: token } });
    expect(accepted.code).toBe(0);
    expect(accepted.stdout).toContain('answer: done');
  });

  it('exits 1 with a message when no API answers at --url', async () => {
    const { code, stderr } = await runCli(['run', '--url', 'http://127.0.0.1:9', 'hi']);
    expect(code).toBe(1);
    expect(stderr).toContain('cannot reach the API at http://127.0.0.1:9');
  });

  it('on SIGINT with stdin not a terminal, cancels the run without asking and exits 130', async () => {
    const { url } = await serve({ default: { text: 'slow', delay_ms: 20_000 } });
    const cli = spawnCli(['run', '--url', url, 'take your time']);
    await cli.waitFor('▶ helper starts');
    const runId = /run (run_\S+)/.exec(cli.stdout())?.[1] ?? '';
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(130);
    expect(cli.stdout()).toContain(`cancelling run ${runId}`);
    expect(await runStatus(url, runId)).toBe('cancelled');
  });
});

describe('ratchet run without --url (API and worker in the CLI process)', () => {
  it('runs the task end to end, answering from stdin', async () => {
    world = createWorld({ script: askColour, redisUrl: inject('redisUrl') });
    const { code, stdout, stderr } = await runCli(['run', '--config', world.configPath, 'Pick a colour'], {
      stdin: '2\n',
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^run (run_\S+) \(session ses_\S+\)\nconsole: http:\/\/127\.0\.0\.1:\d+\/console#\/runs\/\1\n/,
    );
    expect(stdout).toContain('↳ answered: blue');
    expect(stdout).toContain('answer: Blue it is.');
  });

  it('logs a failure as one short line on stderr at a terminal (no JSON, no stack), and as JSON to a pipe', async () => {
    world = createWorld({
      script: { replies: [{ fail: [{ kind: 'auth', message: 'bad key' }] }] },
      redisUrl: inject('redisUrl'),
    });
    const args = ['run', '--config', world.configPath, 'hi'];
    // RATCHET_LOG_FORMAT=pretty: as when stderr is a terminal (here it is a pipe).
    const terminal = await runCli(args, { env: { RATCHET_LOG_FORMAT: 'pretty' } });
    expect(terminal.code).toBe(1);
    expect(terminal.stdout).toMatch(/▶ helper starts: hi\n.*\n✘ failed \(model_auth_failed\): bad key\n$/);
    const lines = terminal.stderr.split('\n').filter((line) => line !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\[\d\d:\d\d:\d\d\] ERROR: step failed for good: model_auth_failed: bad key \(job_id=run_\S+-i1, step=iteration, /,
    );

    const piped = await runCli(args);
    const records = piped.stderr
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { msg: string; err: { stack: string } });
    expect(records.map((record) => record.msg)).toEqual(['step failed for good']);
    expect(records[0]?.err.stack).toContain('RatchetError: bad key\n    at ');
  });
});
