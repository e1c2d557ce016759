import type { Part } from '../chat/index.js';
import { RatchetError } from '../errors/index.js';
import { cancelRun as cancelStoredRun } from '../redis/cancel-run.js';
import { requestUpgrade as requestStoredUpgrade } from '../redis/definition-store.js';
import { mainChatId } from '../redis/keys.js';
import { readRunWaits } from '../redis/wait-store.js';
import {
  defaultRunPriority,
  defaultTenant,
  externalEventLimits,
  maxTenantNameChars,
  parseJsonRecord,
  runPrioritySchema,
  tenantNameSchema,
} from '../schemas/index.js';
import { waitRecordSchema } from '../tools/index.js';
import {
  awaitsAdmission,
  crashPoint,
  goalsProgress,
  isFinished,
  newRunId,
  type Progress,
  planRunCreation,
  type RunView,
  type RunWait,
  type ScheduleOrigin,
  type SubGoal,
  sessionIdOfRun,
  shownStatus,
} from '../workflows/index.js';
import type { StartedRun, StartRunInput } from './engine-options.js';
import type { EngineParts } from './engine-parts.js';
import {
  checkIdempotencyKey,
  idempotencyKeyReused,
  idempotentWrite,
  newSessionIdFor,
  submissionFingerprint,
} from './idempotent-submission.js';
import { questionsOfTree } from './questions.js';
import {
  assertAgent,
  checkMetadata,
  checkRunLimits,
  deadlineOf,
  isTeam,
  prefixOf,
  runBudgetOf,
} from './run-limits.js';
import { type ForkInput, forkRun, retryRun, type SteerContext, type SteerLimits } from './run-steering.js';
import { sessionBusyError } from './session-busy.js';

/** The runs of the client face: start, retry, fork, cancel, read and wait for them. */

export async function startRun(parts: EngineParts, input: StartRunInput): Promise<StartedRun> {
  const { options, store } = parts;
  const priority = input.priority ?? defaultRunPriority;
  checkTenantAndPriority(input.tenant ?? defaultTenant, priority);
  const key = input.idempotencyKey;
  if (key !== undefined) checkIdempotencyKey(key);
  const session = input.sessionId === undefined ? undefined : await store.sessionRecord(input.sessionId);
  // A run on a session is its session's tenant's; another tenant's session is not there for a submission
  // that names a tenant.
  if (input.sessionId !== undefined) {
    if (session === undefined || (input.tenant !== undefined && session.tenant !== input.tenant)) {
      throw new RatchetError('session_not_found', `unknown session ${input.sessionId}`);
    }
  }
  const tenant = session?.tenant ?? input.tenant ?? defaultTenant;
  const sessionId = input.sessionId ?? newSessionIdFor(parts, tenant, key);
  const agent = input.agent ?? session?.agent ?? options.defaultAgent;
  assertAgent(options, agent);
  checkMetadata(options, input.metadata);
  const deadlineAt = deadlineOf(options, parts.now(), agent, input.timeoutS);
  checkRunLimits(options, agent, input);
  const inputParts: Part[] =
    typeof input.input === 'string' ? [{ type: 'text', text: input.input }] : input.input;
  const idempotency =
    key === undefined
      ? undefined
      : idempotentWrite(parts, {
          key,
          tenant,
          sessionId,
          newSession: input.sessionId === undefined,
          fingerprint: submissionFingerprint(input, tenant, priority),
        });

  for (let tries = 0; tries < 5; tries += 1) {
    // A fresh run id on every try, so a try refused as CONFLICT leaves nothing another try could collide with.
    const runId = newRunId(sessionId);
    const chatLength = await store.chatLength(sessionId, mainChatId);
    const plan = planRunCreation({
      sessionId,
      runId,
      agent,
      chatId: mainChatId,
      parts: inputParts,
      newSession: input.sessionId === undefined ? { metadata: input.metadata ?? {} } : undefined,
      ...runBudgetOf(options, agent, input.budget),
      ...(deadlineAt ? { deadlineAt } : {}),
      ...(input.maxIterations === undefined ? {} : { maxIterations: input.maxIterations }),
      prefix: prefixOf(options, agent),
      team: isTeam(options, agent),
      ...definitionOf(options, agent),
      chatLength,
      now: parts.now().toISOString(),
      tenant,
      priority,
    });
    crashPoint('submit.before_run_commit');
    const { code, detail } = await parts.runWriter.write({
      plan,
      chatLength,
      ...(idempotency ? { idempotency } : {}),
      // Under fair admission the first step waits in the delayed set until the run is admitted (below, or
      // by a freed slot); the delay is the safety net of a process that dies before it asks (decision 0038).
      ...(parts.admission ? { firstStepDelayMs: parts.admission.recheckMs } : {}),
    });
    if (code === 'OK') {
      crashPoint('submit.after_run_commit');
      await parts.admission?.admit(plan.record);
      return { runId, sessionId };
    }
    if (code === 'IDEMPOTENT' && detail !== undefined) {
      return { runId: detail, sessionId: sessionIdOfRun(detail) ?? sessionId, replayed: true };
    }
    if (code === 'IDEMPOTENCY_MISMATCH' && key !== undefined) throw idempotencyKeyReused(key, detail ?? '');
    if (code === 'CONFLICT') continue;
    if (code === 'SESSION_BUSY' || code === 'QUEUE_WAITING') throw sessionBusyError(sessionId, code, detail);
    if (code === 'NO_SESSION') throw new RatchetError('session_not_found', `unknown session ${sessionId}`);
    throw new RatchetError('internal', `create-run returned ${code}`);
  }
  throw new RatchetError('internal', `could not start a run on session ${sessionId}: its chat kept changing`);
}

function checkTenantAndPriority(tenant: string, priority: number): void {
  if (!tenantNameSchema.safeParse(tenant).success) {
    throw new RatchetError(
      'invalid_run_settings',
      `tenant "${tenant.slice(0, maxTenantNameChars)}" is not a tenant name: use 1 to ${maxTenantNameChars} lower-case letters, digits, "_" or "-"`,
      { details: { field: 'tenant', limit: maxTenantNameChars } },
    );
  }
  if (!runPrioritySchema.safeParse(priority).success) {
    throw new RatchetError(
      'invalid_run_settings',
      `priority must be a whole number from 1 to 10, not ${priority}`,
      {
        details: { field: 'priority', limit: 10 },
      },
    );
  }
}

/**
 * Starts the run of a schedule's fire under the ids derived from the fire (scheduledRunIds), in a new session:
 * create-run refuses a run whose id exists (RUN_EXISTS) in the same atomic write that would create it, so a
 * fire taken up twice, by any number of processes, starts one run. Resolves either way.
 */
export async function startScheduledRun(
  parts: EngineParts,
  input: {
    sessionId: string;
    runId: string;
    agent: string;
    input: string;
    origin: ScheduleOrigin;
    /** The schedule's tenant (decision 0035); `default` when it names none. */
    tenant?: string | undefined;
  },
): Promise<'started' | 'existed'> {
  const { options } = parts;
  assertAgent(options, input.agent);
  const plan = planRunCreation({
    sessionId: input.sessionId,
    runId: input.runId,
    agent: input.agent,
    chatId: mainChatId,
    parts: [{ type: 'text', text: input.input }],
    newSession: { metadata: { schedule: input.origin.schedule, fire_at: input.origin.fire_at } },
    ...optionalDeadline(deadlineOf(options, parts.now(), input.agent, undefined)),
    prefix: prefixOf(options, input.agent),
    team: isTeam(options, input.agent),
    ...definitionOf(options, input.agent),
    chatLength: 0,
    now: parts.now().toISOString(),
    origin: input.origin,
    ...(input.tenant === undefined ? {} : { tenant: input.tenant }),
  });
  const { code } = await parts.runWriter.write({ plan, chatLength: 0, checked: true });
  if (code === 'OK') return 'started';
  // The fire's run was started before (or its session holds it): the same fire taken up again.
  if (code === 'RUN_EXISTS' || code === 'SESSION_BUSY') return 'existed';
  throw new RatchetError('internal', `create-run returned ${code} for run ${input.runId}`);
}

function optionalDeadline(deadlineAt: string | undefined): { deadlineAt?: string } {
  return deadlineAt ? { deadlineAt } : {};
}

/**
 * Continues a failed or cancelled run from its last recorded iteration, as a new run of the same session
 * that names it (decision 0022); optionally with new limits, each within the agent's. Returns the new run.
 */
export async function retry(parts: EngineParts, runId: string, limits: SteerLimits): Promise<StartedRun> {
  const retryId = await retryRun(steerContext(parts), runId, limits);
  return { runId: retryId, sessionId: sessionIdOfRun(retryId) ?? '' };
}

/**
 * A new session whose chat is the run's up to iteration `atIteration`'s recorded reply (copied, not asked
 * again), and a run that continues it, with a new message or another agent (decision 0022).
 */
export async function fork(parts: EngineParts, runId: string, input: ForkInput): Promise<StartedRun> {
  checkMetadata(parts.options, input.metadata);
  return forkRun(steerContext(parts), runId, input);
}

function steerContext(parts: EngineParts): SteerContext {
  const { options } = parts;
  return {
    store: parts.continuations(),
    space: parts.space,
    now: parts.now,
    limitsOf: (agent, limits) => {
      assertAgent(options, agent);
      const deadlineAt = deadlineOf(options, parts.now(), agent, limits.timeoutS);
      checkRunLimits(options, agent, limits);
      return {
        ...runBudgetOf(options, agent, limits.budget),
        ...(deadlineAt ? { deadlineAt } : {}),
        ...(limits.maxIterations === undefined ? {} : { maxIterations: limits.maxIterations }),
        ...definitionOf(options, agent),
      };
    },
    isTeam: (agent) => isTeam(options, agent),
    prefixOf: (agent) => prefixOf(options, agent),
  };
}

export async function getRun(parts: EngineParts, runId: string): Promise<RunView | undefined> {
  const sessionId = sessionIdOfRun(runId);
  if (!sessionId) return undefined;
  const [stored, progress] = await Promise.all([
    parts.store.loadRun(sessionId, runId),
    parts.store.runProgress(sessionId, runId),
  ]);
  if (!stored) return undefined;
  const record = stored.record;
  const pending =
    record.status === 'running' || record.status === 'queued'
      ? await questionsOfTree(parts, sessionId, record)
      : [];
  const waiting =
    record.status === 'running' || record.status === 'queued'
      ? await waitsOf(parts, sessionId, runId, record.deadline_at)
      : [];
  const queuedReason =
    parts.admission && awaitsAdmission(record)
      ? ((await parts.admission.queuedReasons([record])).get(runId) ?? null)
      : null;
  return {
    ...record,
    status: shownStatus(record.status, pending.length),
    pending_question: pending[0] ?? null,
    waiting,
    queued_reason: queuedReason,
    progress: record.sub_goals
      ? supervisorProgress(record.sub_goals, record.updated_at)
      : progress
        ? (JSON.parse(progress) as Progress)
        : null,
  };
}

/**
 * The open waits of a run (wait_for_event not yet settled, sleeps not yet over), soonest end first. A sleep
 * past the run's deadline or 30 days was refused (its call ended with an error), so it is not listed.
 */
async function waitsOf(
  parts: EngineParts,
  sessionId: string,
  runId: string,
  deadlineAt: string | null,
): Promise<RunWait[]> {
  const nowMs = parts.now().getTime();
  const deadlineMs = deadlineAt === null ? Number.POSITIVE_INFINITY : Date.parse(deadlineAt);
  const records = (await readRunWaits(parts.redis, parts.space, sessionId, runId)).map((json) =>
    parseJsonRecord(waitRecordSchema, json, `a wait of run ${runId}`),
  );
  return records
    .flatMap((record): RunWait[] => {
      if (record.kind === 'sleep') {
        const refused =
          record.until_ms > deadlineMs ||
          record.until_ms - Date.parse(record.started_at) > externalEventLimits.maxSleepS * 1000;
        if (record.until_ms <= nowMs || refused) return [];
        const until = new Date(record.until_ms).toISOString();
        return [{ kind: 'sleep', event: null, since: record.started_at, until }];
      }
      if (record.status !== 'waiting') return [];
      const until = new Date(record.deadline_ms).toISOString();
      return [{ kind: 'event', event: record.event, since: record.started_at, until }];
    })
    .sort((left, right) => left.until.localeCompare(right.until));
}

/** Resolves when the run is finished, or with its current state when the timeout passes. */
export async function waitForRun(
  parts: EngineParts,
  runId: string,
  options: { timeoutMs?: number; pollMs?: number; signal?: AbortSignal },
): Promise<RunView> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const pollMs = options.pollMs ?? 50;
  for (;;) {
    const run = await getRun(parts, runId);
    if (!run) throw new RatchetError('run_not_found', `unknown run ${runId}`);
    const finished = run.status !== 'waiting_input' && isFinished(run.status);
    // A waiter that went away (a long-poll client disconnected) stops polling.
    if (finished || Date.now() >= deadline || options.signal?.aborted) return run;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

export async function cancelRun(parts: EngineParts, runId: string, reason: string): Promise<RunView> {
  await cancelStoredRun(parts.context, runId, reason);
  const run = await getRun(parts, runId);
  if (!run) throw new RatchetError('run_not_found', `unknown run ${runId}`);
  // A cancelled root run frees its admission slot, or leaves the admission queue (decision 0038).
  if (run.parent === null && isFinished(run.status === 'waiting_input' ? 'running' : run.status))
    await parts.admission?.release(run);
  return run;
}

/**
 * Asks a run to move to its workers' current definition at its next iteration (decision 0030). Refused for
 * a finished run, and for one recorded before definitions were (it uses its worker's config already).
 */
export async function requestUpgrade(parts: EngineParts, runId: string): Promise<RunView> {
  const sessionId = sessionIdOfRun(runId);
  if (!sessionId) throw new RatchetError('run_not_found', `unknown run ${runId}`);
  const { code, detail } = await requestStoredUpgrade(
    parts.redis,
    parts.space,
    sessionId,
    runId,
    parts.now().toISOString(),
  );
  if (code === 'NO_RUN') throw new RatchetError('run_not_found', `unknown run ${runId}`);
  if (code === 'FINISHED')
    throw new RatchetError('run_finished', `run ${runId} is ${detail}: nothing to upgrade`);
  if (code === 'NO_DEFINITION') {
    throw new RatchetError(
      'run_finished',
      `run ${runId} was recorded without a definition: it uses its worker's config already`,
    );
  }
  const run = await getRun(parts, runId);
  if (!run) throw new RatchetError('run_not_found', `unknown run ${runId}`);
  return run;
}

/** The definition a new run of the agent records (decision 0030), when the engine has its config. */
/** The definition a new run of `agent` records (decision 0030); none for an engine built without a config. */
export function definitionOf(options: EngineParts['options'], agent: string) {
  const definition = options.definitions?.get(agent);
  // A root run inherits nothing from above it but its config's `options.delegate` default (decision 0047).
  const inherited =
    options.delegateDefault === undefined
      ? {}
      : { inherited: { lineage: [], delegate_default: options.delegateDefault } };
  return definition ? { definition, ...inherited } : {};
}

/** A supervisor's progress is its sub-goals'. */
function supervisorProgress(goals: SubGoal[], at: string): Progress {
  const { fraction, message } = goalsProgress(goals);
  return { fraction, message, at, sub_goals: goals };
}
