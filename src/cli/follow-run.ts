import type { RatchetClient } from '../client/index.js';
import { type RatchetEvent, runEndKinds } from '../events/event.js';
import { apiFailure, type CliApi } from './cli-client.js';
import type { ProcessIo } from './process-io.js';
import type { AskedQuestion } from './question-answers.js';
import { QuestionAsker } from './question-asker.js';
import { createTreeRenderer } from './render-event.js';
import type { Terminal } from './terminal.js';

export type RunOutcome =
  | { status: 'completed'; result: string }
  | { status: 'failed'; message: string }
  | { status: 'cancelled'; reason: string }
  /** Ctrl-C: the run was cancelled (`cancelled: true`) or left running. */
  | { status: 'interrupted'; cancelled: boolean }
  /** The API could not be followed to the end. */
  | { status: 'lost'; message: string };

/** What following a run needs of the API (a CliApi; a test's fake). */
export interface FollowedApi extends Pick<CliApi, 'onStreamLost'> {
  client: Pick<RatchetClient, 'events' | 'answer' | 'cancel'>;
}

export interface FollowRunOptions {
  api: FollowedApi;
  terminal: Terminal;
  runId: string;
  sessionId: string;
  /** Fires on the process's SIGINT; the terminal's own Ctrl-C is read from `terminal`. */
  interrupts: { on(handler: () => void): () => void };
  /**
   * The questions open now, read from the API: given, they are what is asked (at the start and after each
   * ask_user event) instead of the ask_user events themselves. A client attaching to a run reads its events
   * from the start, and only the API knows which of the questions in them are still waiting.
   */
  pendingQuestions?: () => Promise<AskedQuestion[]>;
}

/**
 * Streams a run's session events to the terminal, answers its questions at the prompt, and resolves when the
 * run ends. Ctrl-C asks whether to cancel the run (a piped stdin cannot answer: it cancels at once).
 */
export async function followRun(options: FollowRunOptions): Promise<RunOutcome> {
  const { api, terminal, sessionId } = options;
  const stop = new AbortController();
  const asker = new QuestionAsker({
    terminal,
    respond: (question, response) => api.client.answer(sessionId, question.question_id, response),
  });
  const interrupt = interruptHandler({ ...options, asker, stop: stop.signal });
  terminal.onInterrupt(interrupt.handle);
  const removeSignalHandler = options.interrupts.on(interrupt.handle);
  const streamed = streamRun({
    ...options,
    asker,
    stop: stop.signal,
    cancelling: () => interrupt.cancelling,
  });
  try {
    return await Promise.race([streamed, interrupt.outcome]);
  } finally {
    stop.abort();
    removeSignalHandler();
    await asker.stop();
    await streamed;
  }
}

interface RunContext extends FollowRunOptions {
  asker: QuestionAsker;
  stop: AbortSignal;
}

/** Prints the session's events and hands questions to the asker until the run's terminal event. */
async function streamRun(context: RunContext & { cancelling: () => boolean }): Promise<RunOutcome> {
  const { terminal, asker, runId } = context;
  const stopTelling = context.api.onStreamLost((reason) =>
    terminal.print(`  … event stream lost (${reason}); reconnecting`),
  );
  try {
    // The client resumes a dropped connection after the last event it read (Last-Event-ID), so every event
    // comes once; it gives up after ten failed connections in a row (the run is then 'lost').
    const events = context.api.client.events(context.sessionId, {
      untilRunEnds: runId,
      signal: context.stop,
      retryDelayMs: 250,
      maxRetryDelayMs: 5_000,
    });
    const render = createTreeRenderer(runId);
    const refresh = context.pendingQuestions
      ? questionRefresher(context.pendingQuestions, asker, terminal)
      : undefined;
    refresh?.();
    for await (const received of events) {
      const event = { v: 1, ...received } as RatchetEvent;
      const line = render(event);
      if (line) terminal.print(line);
      if (event.kind === 'ask_user') {
        if (refresh) refresh();
        else asker.add(event.data);
      }
      if (event.kind === 'question_answered') asker.withdraw(event.data.question_id);
      if (event.run_id !== runId || !runEndKinds.includes(event.kind)) continue;
      // Once Ctrl-C has cancelled the run, its end (run_cancelled, or a race lost to completion) is the interrupt's.
      if (context.cancelling()) return { status: 'interrupted', cancelled: true };
      if (event.kind === 'run_completed') return { status: 'completed', result: event.data.result };
      if (event.kind === 'run_failed') return { status: 'failed', message: event.data.error.message };
      if (event.kind === 'run_cancelled') return { status: 'cancelled', reason: event.data.reason };
    }
    return { status: 'interrupted', cancelled: false };
  } catch (error) {
    return {
      status: 'lost',
      message: apiFailure(error) ?? (error instanceof Error ? error.message : String(error)),
    };
  } finally {
    stopTelling();
  }
}

/** Reads the open questions and hands them to the asker: one read at a time, one more if asked meanwhile. */
function questionRefresher(
  read: () => Promise<AskedQuestion[]>,
  asker: QuestionAsker,
  terminal: Terminal,
): () => void {
  let reading = false;
  let again = false;
  const refresh = (): void => {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    void read()
      .then(
        (questions) => {
          for (const question of questions) asker.add(question);
        },
        (error: unknown) =>
          terminal.print(`  could not read the open questions: ${(error as Error).message}`),
      )
      .finally(() => {
        reading = false;
        if (again) {
          again = false;
          refresh();
        }
      });
  };
  return refresh;
}

/** Ctrl-C: at a terminal, "cancel the run? [y/N]" (a second Ctrl-C leaves it running); else cancel at once. */
function interruptHandler(context: RunContext): {
  handle: () => void;
  outcome: Promise<RunOutcome>;
  readonly cancelling: boolean;
} {
  const { terminal, api, runId } = context;
  let settle: (outcome: RunOutcome) => void = () => {};
  const outcome = new Promise<RunOutcome>((resolve) => {
    settle = resolve;
  });
  let confirming = false;
  let cancelling = false;
  const cancel = async (): Promise<void> => {
    cancelling = true;
    terminal.print(`cancelling run ${runId}`);
    try {
      await api.client.cancel(runId, { reason: 'cancelled at the terminal (Ctrl-C)' });
    } catch (error) {
      terminal.print(`could not cancel the run: ${apiFailure(error) ?? (error as Error).message}`);
    }
    settle({ status: 'interrupted', cancelled: true });
  };
  const handle = () => {
    if (cancelling) {
      // Ctrl-C again while the cancel request is on its way: leave now.
      settle({ status: 'interrupted', cancelled: true });
    } else if (!terminal.interactive) {
      void cancel();
    } else if (confirming) {
      settle({ status: 'interrupted', cancelled: false });
    } else {
      confirming = true;
      const resume = context.asker.pause();
      terminal.ask('cancel the run? [y/N] ', context.stop).then(
        async (line) => {
          confirming = false;
          if (line !== undefined && /^\s*y(es)?\s*$/i.test(line)) await cancel();
          else resume();
        },
        () => {
          confirming = false;
        },
      );
    }
  };
  return {
    handle,
    outcome,
    get cancelling() {
      return cancelling;
    },
  };
}

/** The exit code of a run the user stopped following with Ctrl-C (128 + SIGINT). */
export const exitInterrupted = 130;
/** The exit code when the CLI is sent SIGTERM while it follows a run (128 + SIGTERM); the run goes on. */
export const exitTerminated = 143;

/** Prints how a followed run ended and answers the command's exit code. */
export function reportOutcome(
  outcome: RunOutcome,
  context: {
    runId: string;
    terminal: Terminal;
    io: ProcessIo;
    /** The config of the API and worker `ratchet run` started in its process; undefined: an API elsewhere. */
    inProcessConfig: string | undefined;
  },
): number {
  const { terminal, io } = context;
  switch (outcome.status) {
    case 'completed':
      terminal.print(`\nanswer: ${outcome.result}`);
      return 0;
    case 'failed':
    case 'cancelled':
      return 1;
    case 'interrupted':
      if (!outcome.cancelled) {
        io.stderr.write(
          context.inProcessConfig !== undefined
            ? `run ${context.runId} is not cancelled: it stays in Redis and goes on when a worker of its config ` +
                `runs (${io.invocation} dev --config ${context.inProcessConfig})\n`
            : `run ${context.runId} is not cancelled: it goes on\n`,
        );
      }
      return exitInterrupted;
    case 'lost':
      io.stderr.write(`lost the run: ${outcome.message}\n`);
      return 1;
  }
}
