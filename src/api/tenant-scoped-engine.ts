import { RatchetError } from '../errors/index.js';
import { sessionIdOfRun } from '../workflows/index.js';
import { listedRunStatusSchema } from '../workflows/run-record.js';
import type { ApiEngine } from './api-engine.js';
import { ApiError } from './api-error.js';
import { currentCaller } from './caller-scope.js';

/**
 * The engine as a request sees it (decision 0035): for an operator (or an API without tokens) the engine
 * itself; for a scoped token's caller, only its tenant's runs and sessions. Every other id answers as if it
 * did not exist (run_not_found, session_not_found, question_not_found: 404, never a 403 that confirms it),
 * lists are filtered, and a submission is its tenant's. Every route and MCP tool reaches the engine through
 * this, and it is a table over every method of ApiEngine: a method added there does not compile until it
 * says here how it is scoped, so a new route cannot forget the tenant.
 */
export function tenantScopedEngine(
  engine: ApiEngine,
  callerTenant: () => string | undefined = () => currentCaller().tenant,
): ApiEngine {
  /** The session's tenant is the caller's (always, for an operator). Runs are their session's tenant's. */
  const owns = async (sessionId: string | undefined): Promise<boolean> => {
    const tenant = callerTenant();
    if (tenant === undefined) return true;
    if (sessionId === undefined) return false;
    return (await engine.getSession(sessionId))?.tenant === tenant;
  };
  const ownsRun = (runId: string) => owns(sessionIdOfRun(runId));
  const runNotFound = (runId: string) => new RatchetError('run_not_found', `unknown run ${runId}`);
  const sessionNotFound = (sessionId: string) =>
    new RatchetError('session_not_found', `unknown session ${sessionId}`);
  const requireRun = async (runId: string) => {
    if (!(await ownsRun(runId))) throw runNotFound(runId);
  };
  const requireSession = async (sessionId: string) => {
    if (!(await owns(sessionId))) throw sessionNotFound(sessionId);
  };
  const scoped = (): boolean => callerTenant() !== undefined;

  const table: ApiEngine = {
    startRun: (input) => {
      const tenant = callerTenant();
      if (tenant === undefined) return engine.startRun(input);
      if (input.tenant !== undefined && input.tenant !== tenant) {
        throw new RatchetError(
          'invalid_run_settings',
          `tenant: this token submits as tenant "${tenant}" only; leave tenant out or give "${tenant}"`,
          { details: { field: 'tenant' } },
        );
      }
      return engine.startRun({ ...input, tenant });
    },
    getRun: async (runId) => ((await ownsRun(runId)) ? engine.getRun(runId) : undefined),
    waitForRun: async (runId, options) => {
      await requireRun(runId);
      return engine.waitForRun(runId, options);
    },
    cancelRun: async (runId, reason) => {
      await requireRun(runId);
      return engine.cancelRun(runId, reason);
    },
    retryRun: async (runId, limits) => {
      await requireRun(runId);
      return engine.retryRun(runId, limits);
    },
    forkRun: async (runId, input) => {
      await requireRun(runId);
      return engine.forkRun(runId, input);
    },
    runTree: async (runId) => ((await ownsRun(runId)) ? engine.runTree(runId) : undefined),
    runSteps: async (runId, page) => ((await ownsRun(runId)) ? engine.runSteps(runId, page) : undefined),
    runChat: async (runId, from) => ((await ownsRun(runId)) ? engine.runChat(runId, from) : undefined),
    onRunCancelled: (listener) => engine.onRunCancelled(listener),
    onQuestionClosed: (listener) => engine.onQuestionClosed(listener),
    createSession: (input) => {
      const tenant = callerTenant();
      return engine.createSession(tenant === undefined ? input : { ...input, tenant });
    },
    getSession: async (sessionId) => {
      const session = await engine.getSession(sessionId);
      const tenant = callerTenant();
      return tenant === undefined || session?.tenant === tenant ? session : undefined;
    },
    deleteSession: async (sessionId) => (await owns(sessionId)) && engine.deleteSession(sessionId),
    listQuestions: async (sessionId) => {
      await requireSession(sessionId);
      return engine.listQuestions(sessionId);
    },
    respond: async (sessionId, questionId, response) => {
      if (!(await owns(sessionId)))
        throw new RatchetError('question_not_found', `unknown question ${questionId}`);
      return engine.respond(sessionId, questionId, response);
    },
    listApprovals: async (sessionId) => {
      await requireSession(sessionId);
      return engine.listApprovals(sessionId);
    },
    revokeApproval: async (sessionId, key) => {
      await requireSession(sessionId);
      return engine.revokeApproval(sessionId, key);
    },
    readChat: async (sessionId, options) => {
      await requireSession(sessionId);
      return engine.readChat(sessionId, options);
    },
    readEvents: async (sessionId, options) => {
      await requireSession(sessionId);
      return engine.readEvents(sessionId, options);
    },
    followEvents: (sessionId, options) => {
      if (!scoped()) return engine.followEvents(sessionId, options);
      // Joined now, so a follower refused (too many) still throws at once, before a stream is answered; its
      // place is given back when the caller's signal aborts, as every follower's is.
      const followed = engine.followEvents(sessionId, options);
      return (async function* followOwned() {
        await requireSession(sessionId);
        yield* followed;
      })();
    },
    lastEventId: async (sessionId) => {
      await requireSession(sessionId);
      return engine.lastEventId(sessionId);
    },
    sessionState: async (sessionId) => ((await owns(sessionId)) ? engine.sessionState(sessionId) : undefined),
    sessionTasks: async (sessionId) => ((await owns(sessionId)) ? engine.sessionTasks(sessionId) : undefined),
    sessionNotes: async (sessionId) => ((await owns(sessionId)) ? engine.sessionNotes(sessionId) : undefined),
    // An agent's usage and memory span every tenant's runs: an operator's only.
    // (A scoped caller's list of agents shows no usage: what an agent used is every tenant's runs'.)
    agentUsage: async (agent) => (scoped() ? { ...noUsage } : engine.agentUsage(agent)),
    agentMemory: (agent) => {
      if (scoped()) throw new RatchetError('agent_not_found', `no memory of agent ${agent} for this token`);
      return engine.agentMemory(agent);
    },
    // A scoped caller's page is read from its tenant's own run index (decision 0048): full pages, costing its
    // runs, not every tenant's; another tenant named in the filter lists nothing. The sessions are checked
    // too, as everywhere.
    listRuns: async (filter) => {
      const tenant = callerTenant();
      if (tenant === undefined) return engine.listRuns(filter);
      if (filter.tenant !== undefined && filter.tenant !== tenant) return { runs: [], next: null };
      const page = await engine.listRuns({ ...filter, tenant });
      return { ...page, runs: await keepOwned(page.runs, (run) => run.session_id) };
    },
    countRuns: async (sinceMs) => {
      if (!scoped()) return engine.countRuns(sinceMs);
      return countOwnedRuns(sinceMs);
    },
    listSessions: async (filter) => {
      const page = await engine.listSessions(filter);
      if (!scoped()) return page;
      return { ...page, sessions: await keepOwned(page.sessions, (session) => session.id) };
    },
    systemState: async () => {
      if (!scoped()) return engine.systemState();
      // Workers and queues serve every tenant: a scoped caller sees its own runs' counts only.
      return { workers: [], queues: [], runs_by_status: await countOwnedRuns(undefined) };
    },
    inbox: async (limit) => {
      const inbox = await engine.inbox(limit);
      if (!scoped()) return inbox;
      return { ...inbox, questions: await keepOwned(inbox.questions, (question) => question.session_id) };
    },
    oldestPendingQuestions: () => {
      if (scoped()) throw new RatchetError('agent_not_found', 'not available to a scoped token');
      return engine.oldestPendingQuestions();
    },
    stepQueues: () => engine.stepQueues(),
    upgradeRun: async (runId) => {
      await requireRun(runId);
      return engine.upgradeRun(runId);
    },
    // The definitions unfinished runs use, counted over every tenant's runs: an operator's only.
    agentDefinitions: (agent) => {
      if (scoped()) throw new RatchetError('agent_not_found', `no agent is named "${agent}" for this token`);
      return engine.agentDefinitions(agent);
    },
    sendMessage: async (input) => {
      await requireSession(input.sessionId);
      return engine.sendMessage(input);
    },
    cancelQueuedMessage: async (sessionId, messageId) => {
      await requireSession(sessionId);
      return engine.cancelQueuedMessage(sessionId, messageId);
    },
    // Webhooks are the deployment's, their deliveries carry every tenant's events: an operator's only.
    listWebhookDeliveries: async (options) =>
      scoped() ? { deliveries: [], next: null } : engine.listWebhookDeliveries(options),
    redeliverWebhook: async (id) => (scoped() ? undefined : engine.redeliverWebhook(id)),
    // An event reaches every run that waits for its name, and every trigger, whatever their tenant: an
    // operator's only, so a tenant's token is forbidden (403, as /v1/mcp/toolboxes answers it): the request
    // is well formed, and the route exists for every caller. A signal names one run: the caller's own.
    sendEvent: (sent) => {
      if (scoped()) {
        throw new ApiError(
          'forbidden',
          "events reach every tenant's runs: send them with an operator token, or signal a run of your own",
          { reason: 'operator_only' },
        );
      }
      return engine.sendEvent(sent);
    },
    signalRun: async (runId, sent) => {
      await requireRun(runId);
      return engine.signalRun(runId, sent);
    },
    schedules: () => {
      const tenant = callerTenant();
      return tenant === undefined ? engine.schedules() : scopedSchedules(engine.schedules(), tenant);
    },
  };

  /** The items whose session is the caller's, in their order (each session read once). */
  async function keepOwned<T>(items: readonly T[], sessionOf: (item: T) => string): Promise<T[]> {
    const sessions = [...new Set(items.map(sessionOf))];
    const owned = new Map(await Promise.all(sessions.map(async (id) => [id, await owns(id)] as const)));
    return items.filter((item) => owned.get(sessionOf(item)) === true);
  }

  /**
   * The caller's runs by listed status, counted from the run index page by page (at most
   * `maxCountedRuns` runs looked at: the counts of a tenant with more are those of its newest).
   */
  async function countOwnedRuns(sinceMs: number | undefined) {
    const counts = Object.fromEntries(listedRunStatusSchema.options.map((status) => [status, 0])) as Awaited<
      ReturnType<ApiEngine['countRuns']>
    >;
    let after: string | undefined;
    for (let looked = 0; looked < maxCountedRuns; looked += countPage) {
      const page = await engine.listRuns({
        tenant: callerTenant() ?? 'default',
        limit: countPage,
        ...(sinceMs === undefined ? {} : { sinceMs }),
        ...(after === undefined ? {} : { after }),
      });
      for (const run of await keepOwned(page.runs, (listed) => listed.session_id)) counts[run.status] += 1;
      if (page.next === null) break;
      after = page.next;
    }
    return counts;
  }

  return table;
}

type Schedules = ReturnType<ApiEngine['schedules']>;

/**
 * A scoped caller's schedules: those whose spec names its tenant (`default` when it names none); another
 * tenant's schedule answers schedule_not_found, and a schedule it creates is its tenant's.
 */
function scopedSchedules(schedules: Schedules, tenant: string): Schedules {
  const owned = (state: Awaited<ReturnType<Schedules['get']>>) =>
    state !== undefined && (state.record.spec.tenant ?? 'default') === tenant;
  const notFound = (id: string) => new RatchetError('schedule_not_found', `unknown schedule ${id}`);
  const scoped: Pick<Schedules, 'list' | 'get' | 'recentFires' | 'create' | 'remove' | 'setPaused'> = {
    list: async () => (await schedules.list()).filter(owned),
    get: async (id) => {
      const state = await schedules.get(id);
      return owned(state) ? state : undefined;
    },
    recentFires: async (id, count) => {
      if (!owned(await schedules.get(id))) throw notFound(id);
      return schedules.recentFires(id, count);
    },
    create: async (spec) => {
      if (spec.tenant !== undefined && spec.tenant !== tenant) {
        throw new RatchetError(
          'invalid_run_settings',
          `tenant: this token makes schedules of "${tenant}" only`,
          {
            details: { field: 'tenant' },
          },
        );
      }
      const existing = await schedules.get(spec.id);
      if (existing !== undefined && !owned(existing)) {
        throw new RatchetError('invalid_run_settings', `id: schedule id "${spec.id}" is not available`, {
          details: { field: 'id' },
        });
      }
      return schedules.create({ ...spec, tenant });
    },
    remove: async (id) => {
      if (!owned(await schedules.get(id))) throw notFound(id);
      return schedules.remove(id);
    },
    setPaused: async (id, paused) => {
      if (!owned(await schedules.get(id))) throw notFound(id);
      return schedules.setPaused(id, paused);
    },
  };
  // The routes use only these methods; the rest of the class (fire, syncConfig) is a worker's and a start's.
  return scoped as Schedules;
}

const countPage = 100;
const noUsage = { input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, requests: 0, cost_usd: 0 };
/** The most runs a scoped caller's counts look at (GET /v1/system, /v1/runs/summary). */
export const maxCountedRuns = 10_000;
