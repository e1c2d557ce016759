import { createLogger } from '../log/index.js';
import type { OnBusy } from '../schemas/index.js';
import type { ToolBox } from '../tools/index.js';
import { apiFailure, connectApi } from './cli-client.js';
import { loadCliConfig } from './cli-config.js';
import { CliError } from './cli-error.js';
import { type DevStack, startDevStack } from './dev-stack.js';
import { exitInterrupted, exitTerminated, followRun, reportOutcome } from './follow-run.js';
import type { ProcessIo } from './process-io.js';
import { rememberRun, runHistoryPath } from './run-history.js';
import { Terminal } from './terminal.js';

export interface RunCommandOptions {
  task: string;
  agent: string | undefined;
  /** The API to use; without it, an API and a worker start in this process. */
  url: string | undefined;
  token: string | undefined;
  config: string | undefined;
  maxIterations?: number | undefined;
  timeoutS?: number | undefined;
  /** Send the task to this session (a message to it). */
  session?: string | undefined;
  /** With `session`: what the message does while the session's run is active. */
  onBusy?: OnBusy | undefined;
  toolboxes: readonly ToolBox[];
}

/**
 * `ratchet run "<task>"`: submits the task, streams its events, answers its questions, prints the answer.
 * Resolves with the exit code: 0 completed, 1 failed or cancelled (or the API failed us), 130 Ctrl-C.
 */
export async function runCommand(options: RunCommandOptions, io: ProcessIo): Promise<number> {
  const terminal = new Terminal({ input: io.stdin, output: io.stdout, interactive: io.stdin.isTTY === true });
  let stack: DevStack | undefined;
  // Until the run is followed, Ctrl-C just leaves (closing what was started).
  let leave: (code: number) => void = () => {};
  const leaving = new Promise<number>((resolve) => {
    leave = resolve;
  });
  terminal.onInterrupt(() => leave(exitInterrupted));
  const removeEarlyHandler = io.interrupts.on(() => leave(exitInterrupted));
  // SIGTERM leaves at any time, without cancelling the run.
  const removeTerminationHandler = io.terminations.on(() => leave(exitTerminated));
  try {
    const work = async (): Promise<number> => {
      const api = await connect(options, io);
      stack = api.stack;
      const connection = connectApi(api.url, api.token);
      const accepted = await connection.client.submit({
        input: options.task,
        ...(options.agent === undefined ? {} : { agent: options.agent }),
        ...(options.maxIterations === undefined ? {} : { max_iterations: options.maxIterations }),
        ...(options.timeoutS === undefined ? {} : { timeout_s: options.timeoutS }),
        ...(options.session === undefined ? {} : { session_id: options.session }),
        ...(options.onBusy === undefined ? {} : { on_busy: options.onBusy }),
      });
      const { run_id: runId, session_id: sessionId } = accepted;
      if (accepted.delivery === 'queued') {
        // Its run starts when the session's active run ends: nothing to follow yet.
        terminal.print(
          `message ${accepted.message_id} queued in session ${sessionId} (position ${(accepted.position ?? 0) + 1}): it will start run ${runId}`,
        );
        return 0;
      }
      if (accepted.delivery === 'steered') {
        terminal.print(`message ${accepted.message_id} steered into run ${runId} (session ${sessionId})`);
      }
      if (accepted.delivery === 'interrupted') {
        terminal.print(`run ${accepted.interrupted_run_id} interrupted`);
      }
      terminal.print(`run ${runId} (session ${sessionId})${stack ? '' : ` on ${api.url}`}`);
      // The web console's page of the run (served by the same API; in-process, while the run lasts).
      terminal.print(`console: ${api.url}/console#/runs/${runId}`);
      remember({ runId, sessionId, url: stack ? null : api.url, options, io });
      removeEarlyHandler();
      const outcome = await followRun({
        api: connection,
        terminal,
        runId,
        sessionId,
        interrupts: io.interrupts,
      });
      return reportOutcome(outcome, { runId, terminal, io, inProcessConfig: api.configPath });
    };
    return await Promise.race([work(), leaving]);
  } catch (error) {
    const failure = apiFailure(error);
    if (failure !== undefined) {
      io.stderr.write(`${failure}\n`);
      return 1;
    }
    if (error instanceof CliError) {
      io.stderr.write(`${error.message}\n`);
      return error.exitCode;
    }
    throw error;
  } finally {
    removeEarlyHandler();
    removeTerminationHandler();
    terminal.close();
    await (stack as DevStack | undefined)?.close();
  }
}

/** Adds the run to .ratchet/runs.jsonl, for `ratchet runs` and the commands that find its API there. */
function remember(context: {
  runId: string;
  sessionId: string;
  url: string | null;
  options: RunCommandOptions;
  io: ProcessIo;
}): void {
  const path = runHistoryPath();
  try {
    rememberRun(path, {
      run_id: context.runId,
      session_id: context.sessionId,
      url: context.url,
      agent: context.options.agent ?? null,
      task: context.options.task,
      started_at: new Date().toISOString(),
    });
  } catch (error) {
    // The run is submitted: losing its line in the history is not worth failing it for.
    context.io.stderr.write(`could not remember the run in ${path}: ${(error as Error).message}\n`);
  }
}

/** The API at --url, or one started in this process with a worker (and Redis, when none answers). */
async function connect(
  options: RunCommandOptions,
  io: ProcessIo,
): Promise<{ url: string; token: string | undefined; stack?: DevStack; configPath?: string }> {
  if (options.url !== undefined) return { url: options.url, token: options.token ?? io.env.RATCHET_TOKEN };
  const loaded = loadCliConfig(options.config, options.toolboxes);
  const stack = await startDevStack({
    loaded,
    toolboxes: options.toolboxes,
    // Log lines would cut through the run's lines: warnings and errors only, on stderr (one short line each
    // at a terminal).
    logger: createLogger({
      level: io.env.RATCHET_LOG_LEVEL ?? 'warn',
      destination: 'stderr',
      format: loaded.config.log.format,
      env: io.env,
    }),
    host: '127.0.0.1',
    port: 0,
    say: (line) => io.stderr.write(`${line}\n`),
    shutdownTimeoutMs: 2_000,
  });
  return { url: stack.url, token: stack.token, stack, configPath: loaded.path };
}
