import { describeIssues } from '../schemas/issues.js';
import { parseJsonRecord } from '../schemas/parse.js';
import { runDurationMs } from '../workflows/core/run-duration.js';
import { isSessionId, sessionIdOfRun } from '../workflows/ids.js';
import {
  type IndexedRun,
  type ListedRunStatus,
  listedRunStatuses,
  type RunCounts,
  type RunFilter,
  type RunListing,
  type RunPage,
  runPosition,
  type SessionFilter,
  type SessionListing,
  type SessionPage,
  type UsageWithCost,
} from '../workflows/run-listing.js';
import { runRecordSchema } from '../workflows/run-record.js';
import { sessionRecordSchema } from '../workflows/session-record.js';
import type { RedisClient } from './connection.js';
import { type KeySpace, retentionKeys, runIndexKeys, runKeys, sessionKeys, shardOf } from './keys.js';
import { execPipeline } from './run-store.js';
import { runScript } from './scripts.js';

/**
 * Reads of the run index (lua/includes/run-index.lua keeps it) and of the sessions' activity index: pages
 * newest first, merged over the shards by position, each shard read by one script (a Redis Cluster answers
 * each shard from its master). A page looks at a bounded number of entries per source, so a rare filter
 * gives a shorter page and a cursor to go on from, never a long scan.
 */

/** Entries looked at per source and shard for one page. */
export const examinedPerPage = 2000;

/** The most sources list-runs reads (one per listed status); the unused places name the entries hash. */
const maxSources = 8;

interface ShardPage {
  frontier: string;
  matches: { position: string; entry: string }[];
}

/** Told about a listed record that does not parse (a run is listed with what the index knows). */
export type UnreadableRecord = (id: string, problem: string) => void;

/** A page of runs with what their records add (GET /v1/runs). */
export async function listRuns(
  redis: RedisClient,
  space: KeySpace,
  filter: RunFilter,
  examine = examinedPerPage,
  onUnreadable?: UnreadableRecord,
): Promise<RunPage> {
  const page = await listIndexedRuns(redis, space, filter, examine);
  return { runs: await withRecords(redis, space, page.runs, onUnreadable), next: page.next };
}

/** A page of runs as the index alone knows them. */
export async function listIndexedRuns(
  redis: RedisClient,
  space: KeySpace,
  filter: RunFilter,
  examine = examinedPerPage,
): Promise<{ runs: IndexedRun[]; next: RunPage['next'] }> {
  // A run id carries its session: a prefix that names one reads only that session's runs (a run found by its
  // id costs a look at its session, not a scan of every shard).
  const sessionOfPrefix =
    filter.idPrefix === undefined ? undefined : sessionIdOfRun(`${filter.idPrefix.slice(0, 21)}0000000000`);
  const sessionId = filter.sessionId ?? sessionOfPrefix;
  const shards =
    sessionId === undefined
      ? Array.from({ length: space.shards }, (_, shard) => shard)
      : [shardOf(space, sessionId)];
  const upper = upperBound(filter);
  const lower = filter.sinceMs === undefined ? '-' : `[${runPosition(filter.sinceMs, '')}`;
  const pages = await Promise.all(
    shards.map(async (shard): Promise<ShardPage> => {
      const keys = runIndexKeys(space, shard);
      if (filter.tenant !== undefined) await indexTenantsOnce(redis, space, shard);
      const { sources, mode } = sourcesOf(space, keys, { ...filter, ...(sessionId ? { sessionId } : {}) });
      const reply = await runScript(
        redis,
        'list-runs',
        [
          keys.entries,
          ...sources,
          ...Array.from({ length: maxSources - sources.length }, () => keys.entries),
          keys.inputs,
          keys.tenants,
        ],
        [
          upper,
          lower,
          filter.limit,
          examine,
          filter.agent ?? '',
          filter.root === undefined ? '' : filter.root ? '1' : '0',
          (filter.statuses ?? []).join(','),
          filter.idPrefix ?? '',
          mode,
          filter.text ?? '',
          filter.tenant ?? '',
        ],
      );
      const [frontier = '', ...rest] = reply;
      const matches: ShardPage['matches'] = [];
      for (let index = 0; index + 1 < rest.length; index += 2)
        matches.push({ position: rest[index] ?? '', entry: rest[index + 1] ?? '' });
      return { frontier, matches };
    }),
  );
  const { kept, next } = mergePages(pages, filter.limit);
  return { runs: kept.map(({ position, entry }) => listingOf(position, entry)), next };
}

/**
 * The page's runs with what their records add (iterations, usage, cost, times, input line) and, for a root
 * run, its tree's usage: one pipeline per shard, all at once, read when a client lists runs, so nothing is
 * added to a step's commit (issue 22). A record that is gone or does not parse leaves those fields null: one
 * bad record must not hide the whole page.
 */
async function withRecords(
  redis: RedisClient,
  space: KeySpace,
  runs: readonly IndexedRun[],
  onUnreadable: UnreadableRecord | undefined,
): Promise<RunListing[]> {
  const byShard = new Map<number, IndexedRun[]>();
  for (const run of runs) {
    const shard = shardOf(space, run.session_id);
    byShard.set(shard, [...(byShard.get(shard) ?? []), run]);
  }
  const texts = new Map<string, string | null>();
  const trees = new Map<string, UsageWithCost>();
  // On a cluster each shard's keys live on one master: one pipeline per shard, never one across shards.
  await Promise.all(
    [...byShard.values()].map(async (shardRuns) => {
      const pipeline = redis.pipeline();
      for (const run of shardRuns) {
        const keys = runKeys(space, run.session_id, run.id);
        pipeline.hget(keys.run, 'record');
        if (run.root_run_id === null) pipeline.hmget(keys.treeUsage, ...treeUsageFields);
      }
      const replies = await execPipeline(pipeline);
      let cursor = 0;
      for (const run of shardRuns) {
        texts.set(run.id, (replies[cursor++] as string | null) ?? null);
        if (run.root_run_id === null) trees.set(run.id, usageOfSums(replies[cursor++] as (string | null)[]));
      }
    }),
  );
  const nowMs = Date.now();
  return runs.map((run) => ({
    ...run,
    ...recordFields(run.id, texts.get(run.id) ?? null, nowMs, trees.get(run.id), onUnreadable),
  }));
}

/** The fields of a tree's usage hash (RunKeys.treeUsage), as the commits add to them. */
const treeUsageFields = [
  'input_tokens',
  'output_tokens',
  'cached_input_tokens',
  'requests',
  'cost_usd',
] as const;

function usageOfSums(values: readonly (string | null)[]): UsageWithCost {
  const [input = 0, output = 0, cached = 0, requests = 0, cost = 0] = values.map((value) =>
    Number(value ?? 0),
  );
  return {
    input_tokens: input,
    output_tokens: output,
    cached_input_tokens: cached,
    requests,
    cost_usd: cost,
  };
}

const unknownRecordFields = {
  iterations: null,
  usage: null,
  cost_usd: null,
  started_at: null,
  updated_at: null,
  finished_at: null,
  input_line: null,
  duration_ms: null,
  tree_usage: null,
  tenant: null,
  queued_reason: null,
} as const;

function recordFields(
  runId: string,
  text: string | null,
  nowMs: number,
  tree: UsageWithCost | undefined,
  onUnreadable: UnreadableRecord | undefined,
): Omit<RunListing, keyof IndexedRun> {
  // Gone since the page was chosen (retention or a deleted session removes the record and its entry).
  if (text === null) return unknownRecordFields;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    onUnreadable?.(runId, `not valid JSON: ${(error as Error).message}`);
    return unknownRecordFields;
  }
  const parsed = runRecordSchema.safeParse(value);
  if (!parsed.success) {
    onUnreadable?.(runId, describeIssues(parsed.error.issues));
    return unknownRecordFields;
  }
  const record = parsed.data;
  return {
    iterations: record.iteration,
    usage: record.usage,
    cost_usd: record.cost_usd,
    started_at: record.started_at,
    updated_at: record.updated_at,
    finished_at: record.finished_at,
    input_line: record.input_line,
    duration_ms: runDurationMs(record, nowMs),
    tree_usage: tree ?? null,
    tenant: record.tenant,
    queued_reason: null,
  };
}

/** Merges shards' pages newest first: only what every shard has looked at is certain. */
function mergePages(
  pages: readonly ShardPage[],
  limit: number,
): { kept: ShardPage['matches']; next: string | null } {
  // The newest place where a shard stopped looking (places compare as strings).
  const frontier =
    pages
      .map((page) => page.frontier)
      .sort()
      .at(-1) ?? '';
  const all = pages.flatMap((page) => page.matches).sort((a, b) => (a.position < b.position ? 1 : -1));
  const kept = all.filter((match) => match.position >= frontier).slice(0, limit);
  if (kept.length === limit) return { kept, next: kept[kept.length - 1]?.position ?? null };
  return { kept, next: frontier === '' ? null : frontier };
}

function upperBound(filter: RunFilter): string {
  const bounds: string[] = [];
  if (filter.after !== undefined) bounds.push(filter.after);
  // Created at or before `untilMs`: below the first place of the next millisecond.
  if (filter.untilMs !== undefined) bounds.push(runPosition(filter.untilMs + 1, ''));
  if (bounds.length === 0) return '+';
  return `(${bounds.sort()[0]}`;
}

function sourcesOf(
  space: KeySpace,
  keys: ReturnType<typeof runIndexKeys>,
  filter: RunFilter,
): { sources: string[]; mode: 'set' | 'sorted' } {
  // A session's runs are a few: its own set of run ids, sorted in the script.
  if (filter.sessionId !== undefined)
    return { sources: [sessionKeys(space, filter.sessionId).runs], mode: 'set' };
  if (filter.statuses && filter.statuses.length > 0)
    return { sources: [...new Set(filter.statuses)].map(keys.status), mode: 'sorted' };
  // A tenant's runs are read from its own set, whatever else is asked: never the whole index (decision 0048).
  if (filter.tenant !== undefined) return { sources: [keys.tenant(filter.tenant)], mode: 'sorted' };
  if (filter.agent !== undefined) return { sources: [keys.agent(filter.agent)], mode: 'sorted' };
  if (filter.root === true) return { sources: [keys.roots], mode: 'sorted' };
  return { sources: listedRunStatuses.map(keys.status), mode: 'sorted' };
}

function listingOf(position: string, entry: string): IndexedRun {
  const id = position.slice(14);
  const [status = '', created = '0', agent = '', root = '', pending = '0'] = entry.split('|');
  const waiting = Number(pending) > 0 && (status === 'running' || status === 'queued');
  return {
    id,
    session_id: sessionIdOfRun(id) ?? '',
    agent,
    status: (waiting ? 'waiting_input' : status) as ListedRunStatus,
    root_run_id: root === '' ? null : root,
    created_at: new Date(Number(created)).toISOString(),
  };
}

/** Entries the tenant backfill reads per HSCAN and gives per script call. */
const backfillBatch = 500;

/**
 * The one-time backfill of a shard's tenant sets (decision 0048): the runs entered in the index before it kept
 * tenants join their tenant's set, taken from their records; the shard's marker then says it is done, so
 * this costs one GET per list afterwards. Any number of processes may run it at once (the script leaves an
 * entry with a tenant as it is). A run whose record is gone or does not parse joins no tenant's set: it is
 * listed to operators only.
 */
async function indexTenantsOnce(redis: RedisClient, space: KeySpace, shard: number): Promise<void> {
  const keys = runIndexKeys(space, shard);
  if ((await redis.get(keys.tenantsIndexed)) === '1') return;
  let cursor = '0';
  do {
    const [next, flat] = await redis.hscan(keys.entries, cursor, 'COUNT', backfillBatch);
    cursor = next;
    const runIds = flat.filter((_field, index) => index % 2 === 0);
    const known = runIds.length === 0 ? [] : await redis.hmget(keys.tenants, ...runIds);
    const untagged = runIds.filter((_runId, index) => known[index] === null);
    const pipeline = redis.pipeline();
    for (const runId of untagged)
      pipeline.hget(runKeys(space, sessionIdOfRun(runId) ?? '', runId).run, 'record');
    const records = untagged.length === 0 ? [] : await execPipeline(pipeline);
    const pairs = untagged.flatMap((runId, index) => {
      const tenant = tenantOfRecord(records[index] as string | null);
      return tenant === undefined ? [] : [runId, tenant];
    });
    await runScript(redis, 'index-run-tenants', [keys.base], [cursor === '0' ? '1' : '0', ...pairs]);
  } while (cursor !== '0');
}

function tenantOfRecord(text: string | null): string | undefined {
  if (text === null) return undefined;
  try {
    const parsed = runRecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.tenant : undefined;
  } catch {
    return undefined;
  }
}

/** Runs per listed status over every shard: one count per status and shard (created since `sinceMs`). */
export async function countRuns(redis: RedisClient, space: KeySpace, sinceMs?: number): Promise<RunCounts> {
  const perShard = await Promise.all(
    Array.from({ length: space.shards }, async (_, shard) => {
      const keys = runIndexKeys(space, shard);
      const pipeline = redis.pipeline();
      for (const status of listedRunStatuses) {
        if (sinceMs === undefined) pipeline.zcard(keys.status(status));
        else pipeline.zlexcount(keys.status(status), `[${runPosition(sinceMs, '')}`, '+');
      }
      const replies = (await pipeline.exec()) ?? [];
      return replies.map(([error, count]) => {
        if (error) throw error;
        return Number(count);
      });
    }),
  );
  const counts = Object.fromEntries(listedRunStatuses.map((status) => [status, 0])) as RunCounts;
  for (const shardCounts of perShard)
    listedRunStatuses.forEach((status, index) => {
      counts[status] += shardCounts[index] ?? 0;
    });
  return counts;
}

/** Removes runs whose keys were deleted (a session deleted through the API) from their shard's index. */
export async function unindexRuns(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
  runIds: readonly string[],
): Promise<void> {
  if (runIds.length === 0) return;
  await runScript(redis, 'unindex-runs', [sessionKeys(space, sessionId).runIndex], [...runIds]);
}

/**
 * Sessions by last activity, newest first, from the shards' activity indexes (the retention index of
 * sessions). A session that becomes active while a client pages moves to the front: that client has passed it.
 */
export async function listSessions(
  redis: RedisClient,
  space: KeySpace,
  filter: SessionFilter,
  examine = examinedPerPage,
): Promise<SessionPage> {
  if (filter.idPrefix !== undefined && isSessionId(filter.idPrefix))
    return oneSession(redis, space, filter.idPrefix, filter);
  const pages = await Promise.all(
    Array.from({ length: space.shards }, (_, shard) => sessionsOfShard(redis, space, shard, filter, examine)),
  );
  const { kept, next } = mergePages(pages, filter.limit);
  return { sessions: kept.map(({ entry }) => JSON.parse(entry) as SessionListing), next };
}

async function sessionsOfShard(
  redis: RedisClient,
  space: KeySpace,
  shard: number,
  filter: SessionFilter,
  examine: number,
): Promise<ShardPage> {
  const index = retentionKeys(space, shard).sessions;
  const after = filter.after === undefined ? undefined : splitPosition(filter.after);
  const max = Math.min(after?.ms ?? Number.POSITIVE_INFINITY, filter.untilMs ?? Number.POSITIVE_INFINITY);
  const maxBound = Number.isFinite(max) ? String(max) : '+inf';
  const minBound = filter.sinceMs === undefined ? '-inf' : String(filter.sinceMs);
  const matches: ShardPage['matches'] = [];
  let offset = 0;
  while (offset < examine) {
    const batch = Math.min(200, examine - offset);
    const reply = await redis.zrange(
      index,
      maxBound,
      minBound,
      'BYSCORE',
      'REV',
      'LIMIT',
      offset,
      batch,
      'WITHSCORES',
    );
    const members: { key: string; ms: number }[] = [];
    for (let item = 0; item + 1 < reply.length; item += 2)
      members.push({ key: reply[item] ?? '', ms: Number(reply[item + 1]) });
    if (members.length === 0) return { frontier: '', matches };
    const pipeline = redis.pipeline();
    for (const { key } of members) pipeline.hmget(key, 'record', 'active_run');
    const fields = ((await pipeline.exec()) ?? []).map(([error, value]) => {
      if (error) throw error;
      return value as [string | null, string | null];
    });
    members.forEach(({ key, ms }, item) => {
      const match = sessionMatch(key, ms, fields[item] ?? [null, null], filter);
      if (match && matches.length < filter.limit) matches.push(match);
    });
    if (matches.length >= filter.limit || members.length < batch) return { frontier: '', matches };
    offset += members.length;
    if (offset >= examine) {
      const last = members[members.length - 1];
      return {
        frontier: last ? runPosition(last.ms, last.key.slice(last.key.lastIndexOf(':') + 1)) : '',
        matches,
      };
    }
  }
  return { frontier: '', matches };
}

/** A session of the activity index as listed, when it passes the filter. */
function sessionMatch(
  key: string,
  ms: number,
  [record, activeRun]: [string | null, string | null],
  filter: SessionFilter,
): ShardPage['matches'][number] | undefined {
  const id = key.slice(key.lastIndexOf(':session:') + ':session:'.length);
  const position = runPosition(ms, id);
  if (filter.after !== undefined && position >= filter.after) return undefined;
  // Removed since it was indexed (deleted; retention removes both at once).
  if (!record) return undefined;
  const session = parseJsonRecord(sessionRecordSchema, record, `session ${id}`);
  const status = activeRun ? 'active' : 'idle';
  if (filter.status !== undefined && status !== filter.status) return undefined;
  if (filter.agent !== undefined && session.agent !== filter.agent) return undefined;
  if (filter.idPrefix !== undefined && !id.startsWith(filter.idPrefix)) return undefined;
  const listing: SessionListing = {
    id,
    agent: session.agent,
    status,
    active_run_id: activeRun ?? null,
    created_at: session.created_at,
    last_active_at: new Date(ms).toISOString(),
  };
  return { position, entry: JSON.stringify(listing) };
}

/** A session named by its whole id: read directly, not found by a scan. */
async function oneSession(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
  filter: SessionFilter,
): Promise<SessionPage> {
  const keys = sessionKeys(space, sessionId);
  // One slot (the session's shard): one pipeline.
  const [score, fields] = (await redis
    .pipeline()
    .zscore(retentionKeys(space, keys.shard).sessions, keys.session)
    .hmget(keys.session, 'record', 'active_run')
    .exec()
    .then((replies) =>
      (replies ?? []).map(([error, value]) => {
        if (error) throw error;
        return value;
      }),
    )) as [string | null, [string | null, string | null]];
  if (score === null) return { sessions: [], next: null };
  const ms = Number(score);
  if (
    (filter.sinceMs !== undefined && ms < filter.sinceMs) ||
    (filter.untilMs !== undefined && ms > filter.untilMs)
  )
    return { sessions: [], next: null };
  const match = sessionMatch(keys.session, ms, fields, filter);
  return { sessions: match ? [JSON.parse(match.entry) as SessionListing] : [], next: null };
}

function splitPosition(position: string): { ms: number; id: string } {
  const colon = position.indexOf(':');
  return { ms: Number(position.slice(0, colon)), id: position.slice(colon + 1) };
}
