import type { z } from 'zod';
import type { StartedRun } from '../engine/index.js';
import { RatchetError } from '../errors/index.js';
import type {
  acceptedRunSchema,
  createRunBodySchema,
  forkRunBodySchema,
  respondAcceptedSchema,
  retryRunBodySchema,
  Run as WireRun,
} from '../wire/index.js';
import { isFinished, type QuestionResponse, sessionOfQuestion } from '../workflows/index.js';
import type { ApiEngine } from './api-engine.js';
import { toWireRun, toWireSentMessage } from './wire-views.js';

/**
 * What a client may do with runs, as the wire sees it: the HTTP routes and the MCP tools both answer
 * through these, so a submission, a wait or a cancel means the same on either face.
 */

export type CreateRunBody = z.infer<typeof createRunBodySchema>;
export type AcceptedRun = z.infer<typeof acceptedRunSchema>;
export type RespondAccepted = z.infer<typeof respondAcceptedSchema>;

/** How often a wait looks at its run. */
const waitPollMs = 200;

/**
 * Starts a run (on a new session unless `session_id` is given). To a session, without run settings, it is a
 * message to the session: its `on_busy` (or the agent's) decides what happens when the session is busy.
 */
export async function submitRun(
  engine: ApiEngine,
  body: CreateRunBody,
  options: { idempotencyKey?: string | undefined } = {},
): Promise<AcceptedRun> {
  const { input, agent, session_id, metadata, budget, timeout_s, max_iterations, on_busy, tenant, priority } =
    body;
  const idempotencyKey = options.idempotencyKey ?? body.idempotency_key;
  const settings = [
    ['agent', agent],
    ['budget', budget],
    ['timeout_s', timeout_s],
    ['max_iterations', max_iterations],
  ].flatMap(([name, value]) => (value === undefined ? [] : [name as string]));
  if (on_busy !== undefined && session_id === undefined) {
    throw new RatchetError(
      'invalid_run_settings',
      'on_busy: only with session_id (a new session is never busy)',
      {
        details: { field: 'on_busy' },
      },
    );
  }
  if (on_busy !== undefined && on_busy !== 'reject' && settings.length > 0) {
    throw new RatchetError(
      'invalid_run_settings',
      `on_busy: ${on_busy} takes no ${settings.join(', ')}: the run it makes has its agent's limits; leave them out, or use on_busy: reject`,
      { details: { field: 'on_busy' } },
    );
  }
  if (session_id !== undefined && settings.length === 0 && tenant === undefined && priority === undefined) {
    const sent = await engine.sendMessage({
      input,
      sessionId: session_id,
      ...(on_busy === undefined ? {} : { onBusy: on_busy }),
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    });
    return toWireSentMessage(sent);
  }
  const started = await engine.startRun({
    input,
    ...(agent === undefined ? {} : { agent }),
    ...(session_id === undefined ? {} : { sessionId: session_id }),
    ...(metadata === undefined ? {} : { metadata }),
    ...(budget === undefined ? {} : { budget }),
    ...(timeout_s === undefined ? {} : { timeoutS: timeout_s }),
    ...(max_iterations === undefined ? {} : { maxIterations: max_iterations }),
    ...(tenant === undefined ? {} : { tenant }),
    ...(priority === undefined ? {} : { priority }),
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
  });
  return acceptedOf(started);
}

/** What a submission answers: the run, and whether an earlier submission with its key started it. */
export function acceptedOf(started: StartedRun): AcceptedRun {
  return {
    run_id: started.runId,
    session_id: started.sessionId,
    ...(started.replayed === true ? { replayed: true as const } : {}),
  };
}

export type RetryRunBody = NonNullable<z.infer<typeof retryRunBodySchema>>;
export type ForkRunBody = z.infer<typeof forkRunBodySchema>;

function limitsOf(body: RetryRunBody) {
  return {
    ...(body.budget === undefined ? {} : { budget: body.budget }),
    ...(body.timeout_s === undefined ? {} : { timeoutS: body.timeout_s }),
    ...(body.max_iterations === undefined ? {} : { maxIterations: body.max_iterations }),
  };
}

/** Retries a failed or cancelled run: the new run that continues it (decision 0022). */
export async function retryRun(engine: ApiEngine, runId: string, body: RetryRunBody): Promise<AcceptedRun> {
  const started = await engine.retryRun(runId, limitsOf(body));
  return { run_id: started.runId, session_id: started.sessionId };
}

/** Forks a run at an iteration: the new session and its run (decision 0022). */
export async function forkRun(engine: ApiEngine, runId: string, body: ForkRunBody): Promise<AcceptedRun> {
  const started = await engine.forkRun(runId, {
    atIteration: body.at_iteration,
    ...limitsOf(body),
    ...(body.input === undefined ? {} : { input: body.input }),
    ...(body.agent === undefined ? {} : { agent: body.agent }),
    ...(body.metadata === undefined ? {} : { metadata: body.metadata }),
  });
  return { run_id: started.runId, session_id: started.sessionId };
}

/** The run, or run_not_found (also for text that cannot be a run id). */
export async function requireRun(engine: ApiEngine, runId: string): Promise<WireRun> {
  const run = await engine.getRun(runId);
  if (!run) throw new RatchetError('run_not_found', `unknown run ${runId}`);
  return toWireRun(run);
}

export interface RunWait {
  run: WireRun;
  /** false: the timeout passed (or the waiter went away) before the run finished. */
  finished: boolean;
}

/** Waits until the run is finished or `timeoutS` passes; the signal ends the wait early (a client left). */
export async function waitForRun(
  engine: ApiEngine,
  runId: string,
  options: { timeoutS: number; signal?: AbortSignal },
): Promise<RunWait> {
  const run = await engine.waitForRun(runId, {
    timeoutMs: options.timeoutS * 1000,
    pollMs: waitPollMs,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { run: toWireRun(run), finished: run.status !== 'waiting_input' && isFinished(run.status) };
}

/** Cancels the run (and its children); run_finished when it is already finished. */
export async function cancelRun(engine: ApiEngine, runId: string, reason?: string): Promise<WireRun> {
  const run = await (reason === undefined ? engine.cancelRun(runId) : engine.cancelRun(runId, reason));
  return toWireRun(run);
}

/** Which question an answer is for: by its id, or the pending question of a run. */
export type QuestionTarget = { question_id: string } | { run_id: string };

/**
 * Answers a pending question (ask_user, approval, budget); the branch that asked resumes. A run with
 * several pending questions (parallel tool calls) gets the first one answered; name the question to choose.
 */
export async function respondToQuestion(
  engine: ApiEngine,
  target: QuestionTarget,
  response: QuestionResponse,
): Promise<RespondAccepted> {
  let questionId: string;
  let sessionId: string | undefined;
  if ('question_id' in target) {
    questionId = target.question_id;
    sessionId = sessionOfQuestion(questionId);
    if (sessionId === undefined)
      throw new RatchetError('question_not_found', `unknown question ${questionId}`);
  } else {
    const run = await requireRun(engine, target.run_id);
    if (run.pending_question === null) {
      throw new RatchetError(
        'question_not_found',
        `run ${run.id} has no pending question (its status is ${run.status})`,
      );
    }
    questionId = run.pending_question.id;
    sessionId = run.session_id;
  }
  await engine.respond(sessionId, questionId, response);
  return { session_id: sessionId, question_id: questionId };
}
