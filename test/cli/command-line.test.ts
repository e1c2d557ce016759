import { describe, expect, it } from 'vitest';
import { parseCommandLine, UsageError } from '../../src/cli/command-line.js';

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

  it('asks for help with -h, --help or help', () => {
    for (const argv of [['-h'], ['--help'], ['help'], ['run', '--help'], ['config', 'validate', '-h']]) {
      expect(parseCommandLine(argv)).toEqual({ name: 'help' });
    }
  });

  it('refuses what it does not know, saying what is wrong', () => {
    expect(usageError([])).toBe('no command given');
    expect(usageError(['deploy'])).toBe('unknown command "deploy"');
    expect(usageError(['dev', '--bogus'])).toBe("dev: Unknown option '--bogus'");
    expect(usageError(['dev', 'extra'])).toBe('dev: unexpected argument "extra"');
    expect(usageError(['mcp', '--port', '1'])).toBe("mcp: Unknown option '--port'");
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
