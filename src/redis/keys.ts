/**
 * The one place that builds Redis key names. Every key of a session (its chat, events, runs, journals) and
 * the BullMQ queue that runs its steps share one hash tag — the session's shard — so each atomic commit
 * touches a single Redis Cluster slot.
 */

/** The BullMQ queue that runs every step kind (the job name says which kind). */
export const stepQueueName = 'steps';

export interface KeySpace {
  prefix: string;
  shards: number;
}

/** FNV-1a: stable across processes and versions, unlike anything seeded. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** The shard a session lives on. Fixed by the shard count: changing `redis.shards` needs a migration. */
export function shardOf(space: KeySpace, sessionId: string): number {
  return fnv1a(sessionId) % space.shards;
}

/** The key prefix of one shard, hash tag included: `ratchet:{3}`. BullMQ's queue prefix too. */
export function shardPrefix(space: KeySpace, shard: number): string {
  return `${space.prefix}:{${shard}}`;
}

/** The chat every session has; child runs and team members get chats of their own ids. */
export const mainChatId = 'main';

export interface SessionKeys {
  shard: number;
  /** Hash: usage summed over the session's runs (tokens, requests, cost_usd). */
  usage: string;
  /** Hash: `record` (session JSON), `active_run` (id of the run that is not finished, if any). */
  session: string;
  /** Stream of events of every run of the session. */
  events: string;
  /** Set of the ids of every run of the session (for deletion). */
  runs: string;
  /** Hash: question id -> question JSON. */
  questions: string;
  /** Set of the ids of the pending questions. */
  pending: string;
  /** The base key of the shard's run index (runIndexKeys), which the scripts that change a run keep. */
  runIndex: string;
  /** List: the messages waiting to become the session's next runs, oldest first (PendingMessage JSON). */
  queued: string;
}

export function sessionKeys(space: KeySpace, sessionId: string): SessionKeys {
  const shard = shardOf(space, sessionId);
  const base = `${shardPrefix(space, shard)}:session:${sessionId}`;
  return {
    shard,
    usage: `${base}:usage`,
    session: base,
    events: `${base}:events`,
    runs: `${base}:runs`,
    questions: `${base}:questions`,
    pending: `${base}:pending`,
    runIndex: runIndexKeys(space, shard).base,
    queued: `${base}:queued`,
  };
}

export interface SessionDataKeys {
  /** Hash: state key -> JSON value (the `state` toolbox's blackboard). */
  state: string;
  /** Hash: state key -> JSON array of the ids of the step jobs parked until that key is set. */
  stateWatchers: string;
  /** Hash: idempotency key of a state_watch call -> its deadline (ms since the epoch), fixed once. */
  stateWatchDeadlines: string;
  /** Sorted set: the latest state_delete calls' idempotency keys, scored by order and answer (state-delete.lua). */
  stateDeletes: string;
  /** Hash: task id -> task JSON (the `tasks` toolbox's board). */
  tasks: string;
  /** Hash: `seq` (the last task number) and `created:<idempotency key>` -> the task that call created. */
  taskIndex: string;
  /** Hash: `session:<name>` or `agent:<agent>:<name>` -> note JSON (the `notes` toolbox). */
  notes: string;
  /** Hash: run id -> the page that run's browser shows, JSON (the `browser` toolbox, decision 0026). */
  browser: string;
  /**
   * Hash: thread chat id -> id of the latest run that worked on it (delegations with a `thread`, decision
   * 0005): the session's thread chats, kept until the session goes.
   */
  threads: string;
  /** Hash: key -> remembered approval JSON (decision 0046): calls approved for the rest of the session. */
  approvals: string;
}

/** What the built-in session toolboxes keep: under the session's hash tag, deleted with the session. */
export function sessionDataKeys(space: KeySpace, sessionId: string): SessionDataKeys {
  const base = sessionKeys(space, sessionId).session;
  return {
    state: `${base}:state`,
    stateWatchers: `${base}:state-watchers`,
    stateWatchDeadlines: `${base}:state-watch-deadlines`,
    stateDeletes: `${base}:state-deletes`,
    tasks: `${base}:tasks`,
    taskIndex: `${base}:task-index`,
    notes: `${base}:notes`,
    browser: `${base}:browser`,
    threads: `${base}:threads`,
    approvals: `${base}:approvals`,
  };
}

/**
 * String: what the model is sent of a chat (its context view: the summary of its older entries). Beside the
 * chat, so every run on the chat builds its requests the same way; deleted with the session's chats.
 */
export function chatViewKey(chatKeyOfView: string): string {
  return `${chatKeyOfView}:view`;
}

/** Hash: MCP server name -> its tools as last listed by any worker (JSON), for workers that start while it is down. */
export function mcpToolListingsKey(space: KeySpace): string {
  return `${space.prefix}:mcp-tools`;
}

export interface MemoryKeys {
  /** Hash: note name -> note JSON (the `memory` toolbox). */
  notes: string;
  /** Sorted set: note name scored by when it expires (ms). */
  expiry: string;
  /** Sorted set: key of a tool call that wrote, scored by when (ms): a repeated call writes nothing. */
  calls: string;
}

/**
 * The memory of one agent (`agent:<name>`) or of the deployment (`deployment`): outside every session (it
 * outlives them), its keys under one hash tag of their own.
 */
export function memoryKeys(space: KeySpace, scope: string): MemoryKeys {
  const base = `${space.prefix}:{memory:${scope}}`;
  return { notes: `${base}:notes`, expiry: `${base}:expiry`, calls: `${base}:calls` };
}

export interface EventBusKeys {
  /** Hash: event id -> its entry id in its name's stream (what makes the same id deliver once). */
  ids: string;
  /** Sorted set: event id -> when it was recorded (ms), to drop ids past the retention window. */
  idTimes: string;
  /** Sorted set: event name -> when its last event came (ms), to drop the streams of stale names. */
  names: string;
  /** Stream of the events of one name, kept for `events.retention_s`. */
  stream(name: string): string;
  /** Sorted set: `<session id> <job id>` of each step waiting for the name -> its deadline (ms). */
  waiters(name: string): string;
  /** What `stream(name)` and `waiters(name)` put before the name (the publish script drops stale names). */
  streamPrefix: string;
  waitersPrefix: string;
}

/**
 * The events sent to the deployment (POST /v1/events, decision 0033): outside every session (any run may
 * wait for them), under one hash tag of their own, so each publish touches one slot.
 */
export function eventBusKeys(space: KeySpace): EventBusKeys {
  const base = `${space.prefix}:{events}`;
  const streamPrefix = `${base}:stream:`;
  const waitersPrefix = `${base}:waiters:`;
  return {
    ids: `${base}:ids`,
    idTimes: `${base}:id-times`,
    names: `${base}:names`,
    stream: (name) => `${streamPrefix}${name}`,
    waiters: (name) => `${waitersPrefix}${name}`,
    streamPrefix,
    waitersPrefix,
  };
}

/**
 * String: an agent definition's canonical JSON, by its content hash (decision 0030). Outside every session:
 * a thousand runs of one definition, in any sessions, share one key.
 */
export function definitionKey(space: Pick<KeySpace, 'prefix'>, hash: string): string {
  return `${space.prefix}:def:${hash}`;
}

/** Pub/sub channel on which cancellations reach every worker. */
/**
 * String: what a submission with an idempotency key started (decision 0035), expiring after
 * `api.idempotency_ttl_s`. Kept in the shard of the session it names, or for a submission that makes a new
 * session, in the key's own shard (idempotencyShard), where that session's id is then drawn.
 * `keyDigest` is the key's SHA-256 (hex), so a key of any characters makes a plain key name.
 */
export function idempotencyKey(
  space: KeySpace,
  input: { shard: number; tenant: string; sessionId: string | undefined; keyDigest: string },
): string {
  const scope = input.sessionId ?? 'new';
  return `${shardPrefix(space, input.shard)}:idempotency:${input.tenant}:${scope}:${input.keyDigest}`;
}

/** The shard of an idempotency key that starts a new session (the session's id is drawn in it). */
export function idempotencyShard(space: KeySpace, tenant: string, keyDigest: string): number {
  return fnv1a(`${tenant}:${keyDigest}`) % space.shards;
}

export function cancelChannel(space: KeySpace): string {
  return `${space.prefix}:cancel`;
}

/** List of chat entries, append-only. */
export function chatKey(space: KeySpace, sessionId: string, chatId: string): string {
  const shard = shardOf(space, sessionId);
  return `${shardPrefix(space, shard)}:session:${sessionId}:chat:${chatId}`;
}

export interface RunKeys extends SessionKeys {
  /** Hash: `record` (run JSON), `rev` (incremented by every change of the record). */
  run: string;
  /** Hash: what each step of the run has done (see src/workflows/journal.ts). */
  journal: string;
  /** Set of the run's child runs (delegations), for cancelling them with it. */
  children: string;
  /** Hash: usage sums of the run and every run below it (kept on a tree's root, for its run budget). */
  treeUsage: string;
  /** Hash: the run's waits for events and sleeps (lua/wait-begin.lua lists its fields; decision 0033). */
  waits: string;
  /** List: the signals sent to the run (POST /v1/runs/:id/signal), JSON, oldest first. */
  signals: string;
  /** List: messages steered into the run, waiting for its next iteration (PendingMessage JSON, decision 0032). */
  steers: string;
}

/** Recently built run keys per key space: every step of a run asks for them several times. */
const recentRunKeys = new WeakMap<KeySpace, Map<string, Readonly<RunKeys>>>();
const recentRunKeysLimit = 4096;

export function runKeys(space: KeySpace, sessionId: string, runId: string): Readonly<RunKeys> {
  let recent = recentRunKeys.get(space);
  if (!recent) {
    recent = new Map();
    recentRunKeys.set(space, recent);
  }
  const id = `${sessionId} ${runId}`;
  const known = recent.get(id);
  if (known) return known;
  const session = sessionKeys(space, sessionId);
  const base = `${shardPrefix(space, session.shard)}:run:${runId}`;
  const keys = Object.freeze({
    ...session,
    run: base,
    journal: `${base}:journal`,
    children: `${base}:children`,
    treeUsage: `${base}:tree-usage`,
    waits: `${base}:waits`,
    signals: `${base}:signals`,
    steers: `${base}:steers`,
  });
  if (recent.size >= recentRunKeysLimit) recent.clear();
  recent.set(id, keys);
  return keys;
}

/**
 * Sorted set of a shard: session hash key -> when its queue got a message that may start a run (ms): the sessions
 * whose active run ended with messages queued, which a worker's sweep starts (decision 0032).
 */
export function queueStartsKey(space: KeySpace, shard: number): string {
  return `${shardPrefix(space, shard)}:queue-starts`;
}

/** What retention (src/redis/retention.ts) finds expired data by, per shard. */
export interface RetentionKeys {
  /** Sorted set: run id -> when the run finished (ms, Redis clock). */
  finishedRuns: string;
  /** Sorted set: session hash key -> when the session was last active (a run created or finished; ms). */
  sessions: string;
  /** The shard's queue starts (queueStartsKey): the commits that finish a run mark sessions in it. */
  queueStarts: string;
}

export function retentionKeys(space: KeySpace, shard: number): RetentionKeys {
  const base = shardPrefix(space, shard);
  return {
    finishedRuns: `${base}:retention:finished-runs`,
    sessions: `${base}:retention:sessions`,
    queueStarts: queueStartsKey(space, shard),
  };
}

/**
 * The run index of a shard (GET /v1/runs): kept by the scripts that create, move and remove runs, through
 * lua/includes/run-index.lua, which derives the same names from `base` (its header is the contract).
 */
export interface RunIndexKeys {
  base: string;
  /** Hash: run id -> `status|created ms|agent|root run id|pending questions`. */
  entries: string;
  /** Hash: run id -> the first line of its input (RunRecord.input_line), searched by GET /v1/runs?text=. */
  inputs: string;
  /** Sorted set (lexicographic, score 0): `<created ms, 13 digits>:<run id>` of every root run. */
  roots: string;
  /** The same, for the runs listed with one status (`waiting_input` included). */
  status(status: string): string;
  /** The same, for the runs of one agent. */
  agent(agent: string): string;
  /** The same, for the runs of one tenant (a child run: its root's; decision 0048). */
  tenant(tenant: string): string;
  /** Hash: run id -> its tenant (beside the entries, whose format older workers parse; decision 0048). */
  tenants: string;
  /** String "1" once the shard's runs entered before the tenant sets were kept are in them (a backfill). */
  tenantsIndexed: string;
  /** Sorted set: id of each pending question of one kind -> when it was asked (ms since the epoch). */
  pendingQuestions(kind: string): string;
}

export function runIndexKeys(space: KeySpace, shard: number): RunIndexKeys {
  const base = `${shardPrefix(space, shard)}:run-index`;
  return {
    base,
    entries: `${base}:entries`,
    inputs: `${base}:inputs`,
    roots: `${base}:roots`,
    status: (status) => `${base}:status:${status}`,
    agent: (agent) => `${base}:agent:${agent}`,
    tenant: (tenant) => `${base}:tenant:${tenant}`,
    tenants: `${base}:tenants`,
    tenantsIndexed: `${base}:tenants-indexed`,
    pendingQuestions: (kind) => `${base}:questions:${kind}`,
  };
}

/** The lock BullMQ holds while a worker processes a job; our commits check its token (fencing). */
export function jobLockKey(space: KeySpace, shard: number, jobId: string): string {
  return `${shardPrefix(space, shard)}:${stepQueueName}:${jobId}:lock`;
}

/**
 * The keys of a shard's step queue that adding a job writes (BullMQ's own names: wait, meta, active, events,
 * marker), in the order the commit scripts take them, and the prefix its job hashes are named with.
 */
export function stepQueueKeys(space: KeySpace, shard: number): { keys: string[]; jobPrefix: string } {
  const queue = `${shardPrefix(space, shard)}:${stepQueueName}:`;
  return {
    keys: ['wait', 'meta', 'active', 'events', 'marker'].map((name) => `${queue}${name}`),
    jobPrefix: queue,
  };
}

/** Every key this key space owns, for cleanup in tests and tooling. */
export function keyPattern(space: KeySpace): string {
  return `${space.prefix}:*`;
}

export interface RateLimitKeys {
  reservations: string;
  tokens: string;
  state: string;
}

/**
 * A provider's shared limiter. One hash tag per provider (not per shard): the limit holds across every shard
 * and worker, and each script touches one slot.
 */
export function rateLimitKeys(space: KeySpace, provider: string): RateLimitKeys {
  const base = `${space.prefix}:{ratelimit:${provider}}`;
  return { reservations: `${base}:reservations`, tokens: `${base}:tokens`, state: `${base}:state` };
}

/**
 * A tenant's token budget (`tenants.<name>.tokens_per_minute`, decision 0038): the provider limiter's keys
 * under a hash tag of its own per tenant.
 */
export function tenantBudgetKeys(space: KeySpace, tenant: string): RateLimitKeys {
  const base = `${space.prefix}:{budget:${tenant}}`;
  return { reservations: `${base}:reservations`, tokens: `${base}:tokens`, state: `${base}:state` };
}

export interface AdmissionKeys {
  /** Hash: run id -> tenant, the root runs admitted and not yet released. */
  active: string;
  /** Hash: tenant -> its active runs. */
  counts: string;
  /** Hash: tenant -> its virtual time (admissions / weight). */
  vtime: string;
  /** Set: the tenants with queued runs. */
  waiting: string;
  /** The base of each tenant's queue (sorted set: run id -> priority and age); the tenant's name follows. */
  queueBase: string;
  /** String: held by the worker that sweeps released runs out of `active` (one at a time). */
  sweepLock: string;
}

/**
 * Fair admission (decision 0038): one hash tag for the whole deployment, so an admission decision is one
 * atomic script whatever the shard of the run.
 */
export function admissionKeys(space: KeySpace): AdmissionKeys {
  const base = `${space.prefix}:{admission}`;
  return {
    active: `${base}:active`,
    counts: `${base}:counts`,
    vtime: `${base}:vtime`,
    waiting: `${base}:waiting`,
    queueBase: `${base}:queue:`,
    sweepLock: `${base}:sweep`,
  };
}

/** Hash: usage of an agent summed over its runs on one shard (the API adds the shards up). */
export function agentUsageKey(space: KeySpace, shard: number, agent: string): string {
  return `${shardPrefix(space, shard)}:usage:agent:${agent}`;
}

export interface TestLedgerKeys {
  /** List: every side effect recorded with `record` (JSON `{ key, value }`), in order. */
  effects: string;
  /** Hash: key -> value JSON of the side effects recorded with `recordOnce` (the first under each key). */
  once: string;
}

/** The side-effect ledger of `ratchet/testing` (one per test engine, under its own prefix). */
export function testLedgerKeys(space: Pick<KeySpace, 'prefix'>): TestLedgerKeys {
  const base = `${space.prefix}:{testing}:ledger`;
  return { effects: `${base}:effects`, once: `${base}:once` };
}

/** The BullMQ queue of webhook deliveries (decision 0034): one for the deployment, under its own hash tag. */
export const webhookQueueName = 'deliveries';

/** The prefix of the webhook delivery queue and of its index: `ratchet:{webhooks}`. */
export function webhookQueuePrefix(space: Pick<KeySpace, 'prefix'>): string {
  return `${space.prefix}:{webhooks}`;
}

/**
 * Stream: the shard's webhook outbox, references to events a webhook may hear of, added by the commit that
 * adds the event (lua/includes/webhook-outbox.lua derives the same name from the session's events key).
 */
export function webhookOutboxKey(space: KeySpace, shard: number): string {
  return `${shardPrefix(space, shard)}:webhooks:outbox`;
}

/**
 * String: the body of an event's webhook deliveries (one per event, shared by every webhook), written when
 * they are enqueued and kept as long as they are: a delivery retried for a day does not depend on its
 * session's event stream, which is trimmed.
 */
export function webhookBodyKey(space: Pick<KeySpace, 'prefix'>, messageId: string): string {
  return `${webhookQueuePrefix(space)}:body:${messageId}`;
}

/** Sorted set: delivery job id -> the time it was enqueued (ms), newest last: the deliveries list. */
export function webhookDeliveryIndexKey(space: Pick<KeySpace, 'prefix'>): string {
  return `${webhookQueuePrefix(space)}:index`;
}

/** The BullMQ queue whose job schedulers fire the schedules (decision 0036). */
export const scheduleQueueName = 'schedules';

/**
 * The schedules' hash tag: every schedule's keys and the BullMQ queue that fires them share one slot, so a
 * fire's decision and the schedule's index are written by one script.
 */
export function schedulesPrefix(space: KeySpace): string {
  return `${space.prefix}:{schedules}`;
}

export interface ScheduleKeys {
  /** Set of every schedule id. */
  index: string;
  /**
   * Hash: `record` (JSON), `rev`, `last_run` and `last_fire` (the latest fire that started a run), `queued`
   * (the fire time waiting for the previous run), `fire:<ms>` (what each fire decided).
   */
  schedule: string;
  /** Sorted set: the fire times decided (ms), to trim the oldest decisions. */
  fires: string;
}

export function scheduleKeys(space: KeySpace, scheduleId: string): ScheduleKeys {
  const base = schedulesPrefix(space);
  return {
    index: `${base}:schedule-ids`,
    schedule: `${base}:schedule:${scheduleId}`,
    fires: `${base}:schedule:${scheduleId}:fires`,
  };
}
