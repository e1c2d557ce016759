import { describe, expect, it } from 'vitest';
import {
  type CommandName,
  commandUsage,
  parseCommandLine,
  UsageError,
  usageText,
} from '../../src/cli/command-line.js';

function usageError(argv: string[]): string {
  try {
    parseCommandLine(argv);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error(`parsed: ${argv.join(' ')}`);
}

describe('parseCommandLine', () => {
  it('reads each command with its options', () => {
    expect(parseCommandLine(['dev'])).toEqual({ name: 'dev', config: undefined, port: undefined });
    expect(parseCommandLine(['dev', '--config', 'c.yaml', '--port', '9000'])).toEqual({
      name: 'dev',
      config: 'c.yaml',
      port: 9000,
    });
    expect(parseCommandLine(['api', '-c', 'c.yaml', '--port=0'])).toEqual({
      name: 'api',
      config: 'c.yaml',
      port: 0,
    });
    expect(parseCommandLine(['worker', '--concurrency', '4'])).toEqual({
      name: 'worker',
      config: undefined,
      concurrency: 4,
    });
    expect(parseCommandLine(['mcp'])).toEqual({ name: 'mcp', config: undefined });
    expect(parseCommandLine(['mcp', '--config', 'c.yaml'])).toEqual({ name: 'mcp', config: 'c.yaml' });
    expect(
      parseCommandLine(['mcp', '--toolboxes', 'filesystem, exec', '--require-approval', 'run_command']),
    ).toEqual({
      name: 'mcp',
      config: undefined,
      toolboxes: ['filesystem', 'exec'],
      requireApproval: ['run_command'],
    });
    expect(parseCommandLine(['config', 'validate', 'x.yaml'])).toEqual({
      name: 'config-validate',
      file: 'x.yaml',
    });
  });

  it('reads run: the task (words joined), agent, url without a trailing slash, token', () => {
    expect(parseCommandLine(['run', 'What is 2 + 2?'])).toEqual({
      name: 'run',
      task: 'What is 2 + 2?',
      agent: undefined,
      url: undefined,
      token: undefined,
      config: undefined,
      maxIterations: undefined,
      timeoutS: undefined,
    });
    expect(parseCommandLine(['run', 'go', '--max-iterations', '3', '--timeout', '60'])).toMatchObject({
      maxIterations: 3,
      timeoutS: 60,
    });
    expect(usageError(['run', 'go', '--max-iterations', '0'])).toBe(
      '--max-iterations: must be a whole number from 1 up (got "0")',
    );
    expect(
      parseCommandLine([
        'run',
        '--agent',
        'researcher',
        'find',
        'it',
        '--url',
        'http://h:8080/',
        '--token',
        't',
      ]),
    ).toMatchObject({ task: 'find it', agent: 'researcher', url: 'http://h:8080', token: 't' });
    expect(parseCommandLine(['run', '--', '--literally a task'])).toMatchObject({
      task: '--literally a task',
    });
  });

  it('asks for help with -h, --help or help; after a command, for that command', () => {
    for (const argv of [['-h'], ['--help'], ['help']]) {
      expect(parseCommandLine(argv)).toEqual({ name: 'help' });
    }
    expect(parseCommandLine(['run', '--help'])).toEqual({ name: 'help', command: 'run' });
    expect(parseCommandLine(['help', 'status'])).toEqual({ name: 'help', command: 'status' });
    expect(parseCommandLine(['config', 'validate', '-h'])).toEqual({ name: 'help', command: 'config' });
    expect(parseCommandLine(['run', '--', '-h'])).toMatchObject({ name: 'run', task: '-h' });
    expect(commandUsage('attach')).toMatch(/^Usage: ratchet attach RUN_ID \[--url URL\] \[--token T\]\n/);
    expect(commandUsage('attach')).toContain('--token T');
    expect(commandUsage('attach')).not.toContain('--port');
  });

  it('reads the commands about a run already started, with --url and --token', () => {
    const api = { url: undefined, token: undefined };
    const noFilter = { statuses: [], agent: undefined, session: undefined, limit: undefined, all: false };
    expect(parseCommandLine(['runs'])).toEqual({ name: 'runs', ...noFilter, ...api });
    expect(parseCommandLine(['runs', '--session', 'ses_x', '--url', 'http://h:1/'])).toEqual({
      name: 'runs',
      ...noFilter,
      session: 'ses_x',
      url: 'http://h:1',
      token: undefined,
    });
    // --status repeated or as a comma list, each status once; --limit and --all.
    expect(
      parseCommandLine([
        'runs',
        '--status',
        'failed,cancelled',
        '--status',
        'failed',
        '--status',
        'waiting_input',
        '--agent',
        'writer',
        '--limit',
        '5',
        '--all',
      ]),
    ).toEqual({
      name: 'runs',
      statuses: ['failed', 'cancelled', 'waiting_input'],
      agent: 'writer',
      session: undefined,
      limit: 5,
      all: true,
      ...api,
    });
    expect(usageError(['runs', '--status', 'failed,finished'])).toBe(
      '--status: "finished" is not a run status; give one or more of queued, running, waiting, waiting_input, waiting_for_worker, completed, failed, cancelled',
    );
    expect(usageError(['runs', '--status', 'faild'])).toContain('(did you mean "failed"?)');
    expect(usageError(['runs', '--limit', '501'])).toBe(
      '--limit: must be a whole number from 1 to 500 (got "501")',
    );
    expect(usageError(['runs', '--all=yes'])).toMatch(/^runs: /);
    expect(parseCommandLine(['status', 'run_a', '--token', 't'])).toEqual({
      name: 'status',
      runId: 'run_a',
      url: undefined,
      token: 't',
    });
    expect(parseCommandLine(['attach', 'run_a'])).toEqual({ name: 'attach', runId: 'run_a', ...api });
    expect(parseCommandLine(['cancel', 'run_a', '--reason', 'enough'])).toEqual({
      name: 'cancel',
      runId: 'run_a',
      reason: 'enough',
      ...api,
    });
    expect(parseCommandLine(['answer', 'q-1', 'blue and green'])).toEqual({
      name: 'answer',
      id: 'q-1',
      text: 'blue and green',
      ...api,
    });
  });

  it('suggests the command or option meant', () => {
    expect(usageError(['rnus'])).toBe('unknown command "rnus" (did you mean "runs"?)');
    expect(usageError(['stauts', 'run_a'])).toBe('unknown command "stauts" (did you mean "status"?)');
    expect(usageError(['attahc'])).toBe('unknown command "attahc" (did you mean "attach"?)');
    expect(usageError(['wroker'])).toBe('unknown command "wroker" (did you mean "worker"?)');
    expect(usageError(['deploy'])).toBe('unknown command "deploy"');
    expect(usageError(['run', 'x', '--max-iteration', '3'])).toBe(
      'run: unknown option "--max-iteration" (did you mean "--max-iterations"?)',
    );
    expect(usageError(['runs', '--sesion', 's'])).toBe(
      'runs: unknown option "--sesion" (did you mean "--session"?)',
    );
    expect(usageError(['status', 'run_a', '--tokn=t'])).toBe(
      'status: unknown option "--tokn" (did you mean "--token"?)',
    );
    expect(usageError(['config', 'valdiate', 'f'])).toBe(
      'config: unknown action "valdiate" (did you mean "validate"?)',
    );
    expect(usageError(['--url', 'http://h', 'runs'])).toBe(
      'give the command before its options (got "--url")',
    );
  });

  it("says which command a mistake belongs to, so that command's usage is shown", () => {
    const commandOf = (argv: string[]) => {
      try {
        parseCommandLine(argv);
      } catch (error) {
        if (error instanceof UsageError) return error.command;
      }
      return 'parsed';
    };
    expect(commandOf(['status'])).toBe('status');
    expect(commandOf(['run', 'x', '--url', 'ftp://h'])).toBe('run');
    expect(commandOf(['rnus'])).toBeUndefined();
  });

  it('refuses what it does not know, saying what is wrong', () => {
    expect(usageError([])).toBe('no command given');
    expect(usageError(['deploy'])).toBe('unknown command "deploy"');
    expect(usageError(['dev', '--bogus'])).toBe('dev: unknown option "--bogus"');
    expect(usageError(['dev', 'extra'])).toBe('dev: unexpected argument "extra"');
    expect(usageError(['mcp', '--port', '1'])).toBe('mcp: unknown option "--port"');
    expect(usageError(['mcp', '--toolboxes', ' , '])).toBe(
      'mcp: --toolboxes needs names, e.g. --toolboxes filesystem,search',
    );
    expect(usageError(['mcp', '--require-approval', 'write_file'])).toBe(
      'mcp: --require-approval goes with --toolboxes (e.g. --toolboxes exec)',
    );
    expect(usageError(['config', 'validate', '-x'])).toBe(
      'config: unknown option "-x" (it takes no options)',
    );
    expect(usageError(['status'])).toMatch(/^status: give the run id/);
    expect(usageError(['status', 'a', 'b'])).toBe(
      'status: unexpected argument "b" (quote an argument that has spaces)',
    );
    expect(usageError(['answer', 'q-1'])).toMatch(/^answer: give the id and the answer/);
    expect(usageError(['cancel', 'run_a', '--url', 'h:8080'])).toMatch(/--url: must be an http/);
    expect(usageError(['worker', '--concurrency', '0'])).toMatch(
      /--concurrency: must be a whole number from 1/,
    );
    expect(usageError(['api', '--port', '70000'])).toMatch(/--port: must be a whole number from 0 to 65535/);
    expect(usageError(['api', '--port'])).toMatch(/argument missing/);
    expect(usageError(['run'])).toMatch(/give the task/);
    expect(usageError(['run', 'x', '--url', 'ftp://h'])).toMatch(/--url: must be an http/);
    expect(usageError(['run', 'x', '--url', 'http://h', '--config', 'c.yaml'])).toMatch(
      /--config applies only without/,
    );
    expect(usageError(['run', 'x', '--token', 't'])).toMatch(/--token applies only with --url/);
    expect(usageError(['config'])).toMatch(/config validate F/);
    expect(usageError(['config', 'check', 'x'])).toBe('config: unknown action "check"');
    expect(usageError(['config', 'validate'])).toMatch(/give the config file/);
    expect(usageError(['config', 'validate', 'a', 'b'])).toBe('config validate: unexpected argument "b"');
  });
});

const commandNames: CommandName[] = [
  'dev',
  'api',
  'worker',
  'mcp',
  'run',
  'runs',
  'status',
  'attach',
  'cancel',
  'answer',
  'config',
];

/** The options a command's usage lists under "Options:" (their long names). */
function listedOptions(usage: string): string[] {
  const [, options = ''] = usage.split('\nOptions:\n');
  return [...options.matchAll(/^ {2}(?:-\w, )?(--[\w-]+)/gm)].map((match) => match[1] ?? '');
}

describe('the usage texts', () => {
  it.each(commandNames)('%s: its usage line names every option it accepts', (name) => {
    const usage = commandUsage(name);
    const usageLine = usage.split('\n')[0] ?? '';
    for (const option of listedOptions(usage)) expect(usageLine).toContain(option);
    // And the whole usage's list of commands shows the same line.
    expect(usageText()).toContain(`  ${usageLine.replace('Usage: ratchet ', '')}`);
  });

  it("run --help tells run's --agent, runs --help the list's, and neither the other's", () => {
    expect(commandUsage('run')).toContain(
      "--agent A          the agent (or team) to work on the task (default: the config's entry agent)",
    );
    expect(commandUsage('run')).not.toContain("this agent's runs");
    expect(commandUsage('runs')).toContain("--agent A          only this agent's runs");
    expect(commandUsage('runs')).not.toContain('to work on the task');
  });

  it.each(['status', 'attach', 'cancel', 'answer'] as const)(
    '%s --help says which API --url defaults to, and nothing about starting one',
    (name) => {
      const usage = commandUsage(name);
      expect(usage).toContain(
        '--url URL          the API (default: $RATCHET_URL, else the API the run was started on from',
      );
      expect(usage).not.toMatch(/starts? an API|start in this process/);
    },
  );

  it('run --help says that without --url an API and a worker start in the process, and that --config is for them', () => {
    const usage = commandUsage('run');
    expect(usage).toContain(
      '--url URL          submit to the API at URL (without it, an API and a worker start in this process)',
    );
    expect(usage).toContain(
      '-c, --config F     config of the API and worker started for the run when there is no --url',
    );
    expect(usage).not.toContain('$RATCHET_URL');
  });

  it('starts every command it shows with how the user runs the CLI', () => {
    expect(commandUsage('status', 'npx ratchet')).toMatch(/^Usage: npx ratchet status RUN_ID/);
    expect(commandUsage('status', 'npx ratchet')).toContain('\nnpx ratchet --help lists every command.');
    expect(usageText('npx ratchet')).toMatch(/^Usage: npx ratchet <command> \[options\]\n/);
    const message = (() => {
      try {
        parseCommandLine(['attach'], 'npx ratchet');
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    })();
    expect(message).toBe('attach: give the run id, e.g. npx ratchet attach run_…');
  });
});
