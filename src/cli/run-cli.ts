// Commands import what they need when they run: `config validate` and `--help` load no server code.
import '../models/index.js';
import { logFormatProblem } from '../log/log-format.js';
import type { ToolBox } from '../tools/index.js';
import { apiFailure } from './cli-client.js';
import { resolveConfigPath } from './cli-config.js';
import { CliError } from './cli-error.js';
import { type Command, commandUsage, parseCommandLine, UsageError, usageText } from './command-line.js';
import { type ProcessIo, processIo } from './process-io.js';
import { validateConfigCommand } from './validate-config-command.js';

/** The commands that write a log (the others talk to an API and print their own lines only). */
const logsHere: ReadonlySet<Command['name']> = new Set(['dev', 'api', 'worker', 'mcp', 'run']);

/** Runs one command; resolves with its exit code, or undefined when the process lives on (a worker). */
async function main(argv: readonly string[], io: ProcessIo): Promise<number | undefined> {
  let command: Command;
  try {
    command = parseCommandLine(argv, io.invocation);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(
      `ratchet: ${error.message}\n\n${error.command ? commandUsage(error.command, io.invocation) : usageText(io.invocation)}\n`,
    );
    return 2;
  }
  // The CLI offers the built-in toolboxes only (built from the config's `tools` section when it loads).
  const toolboxes: readonly ToolBox[] = [];
  const logFormat = logsHere.has(command.name) ? logFormatProblem(io.env) : undefined;
  if (logFormat !== undefined) {
    io.stderr.write(`ratchet: ${logFormat}\n`);
    return 2;
  }
  switch (command.name) {
    case 'help':
      io.stdout.write(
        `${command.command ? commandUsage(command.command, io.invocation) : usageText(io.invocation)}\n`,
      );
      return 0;
    case 'config-validate':
      return validateConfigCommand(command.file, toolboxes, {
        out: (line) => io.stdout.write(`${line}\n`),
        err: (line) => io.stderr.write(`${line}\n`),
      });
    case 'contract-check': {
      const { contractCheckCommand } = await import('./contract-command.js');
      return contractCheckCommand(command, io);
    }
    case 'init': {
      const { initCommand } = await import('./init-command.js');
      return initCommand(command.dir, io);
    }
    case 'run': {
      const { runCommand } = await import('./run-command.js');
      return runCommand({ ...command, toolboxes }, io);
    }
    case 'runs':
    case 'schedules':
    case 'status':
    case 'cancel':
    case 'answer':
    case 'attach':
    case 'events-send':
    case 'signal':
      return remoteCommand(command, io);
    case 'dev': {
      const { devCommand } = await import('./server-commands.js');
      return devCommand({ config: command.config, port: command.port, toolboxes }, io);
    }
    case 'api': {
      const { apiCommand } = await import('./server-commands.js');
      return apiCommand({ config: command.config, port: command.port, toolboxes }, io);
    }
    case 'mcp': {
      const { mcpCommand } = await import('./mcp-command.js');
      return mcpCommand(
        {
          config: command.config,
          toolboxes,
          serve: command.toolboxes,
          requireApproval: command.requireApproval,
        },
        io,
      );
    }
    case 'worker': {
      // The worker process handles its own signals and exits by itself; it catches them before its
      // modules load, so a SIGTERM while it starts is a clean stop.
      const { catchShutdownSignals } = await import('../worker/shutdown-signals.js');
      catchShutdownSignals();
      const { startWorkerProcess } = await import('../worker/index.js');
      await startWorkerProcess({
        argv: [
          '--config',
          resolveConfigPath(command.config, io.env),
          ...(command.concurrency === undefined ? [] : ['--concurrency', String(command.concurrency)]),
        ],
        toolboxes,
      });
      return undefined;
    }
  }
}

/** The commands about runs already started, against an API; the API's refusals are one line each (exit 1). */
async function remoteCommand(
  command: Extract<
    Command,
    { name: 'runs' | 'schedules' | 'status' | 'cancel' | 'answer' | 'attach' | 'events-send' | 'signal' }
  >,
  io: ProcessIo,
): Promise<number> {
  try {
    switch (command.name) {
      case 'attach': {
        const { attachCommand } = await import('./attach-command.js');
        return await attachCommand(command, io);
      }
      case 'runs': {
        const { runsCommand } = await import('./runs-command.js');
        return await runsCommand(command, io);
      }
      case 'schedules': {
        const { schedulesCommand } = await import('./schedules-command.js');
        return await schedulesCommand(command, io);
      }
      case 'events-send':
      case 'signal': {
        const { eventsSendCommand, signalCommand } = await import('./external-event-commands.js');
        return command.name === 'signal'
          ? await signalCommand(command, io)
          : await eventsSendCommand(command, io);
      }
      default: {
        const remote = await import('./remote-commands.js');
        if (command.name === 'status') return await remote.statusCommand(command, io);
        if (command.name === 'cancel') return await remote.cancelCommand(command, io);
        return await remote.answerCommand(command, io);
      }
    }
  } catch (error) {
    const failure = apiFailure(error);
    if (failure === undefined) throw error;
    io.stderr.write(`${failure}\n`);
    return 1;
  }
}

/**
 * Runs `ratchet` with these arguments in this process, and exits with the command's code (a worker lives on
 * until its signal).
 */
export async function runCli(argv: readonly string[]): Promise<void> {
  const io = processIo();
  let code: number | undefined;
  try {
    code = await main(argv, io);
  } catch (error) {
    code = error instanceof CliError ? error.exitCode : 1;
    io.stderr.write(
      `${error instanceof CliError ? error.message : `ratchet: ${(error as Error).stack ?? String(error)}`}\n`,
    );
  }
  if (code !== undefined) {
    const exitCode = code;
    // Exit once what was written has been flushed (stdout may be a pipe).
    process.stdout.write('', () => process.stderr.write('', () => process.exit(exitCode)));
  }
}
