import { Cluster } from 'ioredis';
import { z } from 'zod';
import { type CapabilityKind, capabilitiesSchema } from '../schemas/capabilities.js';
import { parseJsonRecord } from '../schemas/parse.js';
import { defineRecordKind } from '../schemas/record-kinds.js';
import type { Capabilities } from '../workflows/core/step-needs.js';
import type { RedisClient } from './connection.js';
import { jobLockKey, type KeySpace, shardPrefix, stepQueueName } from './keys.js';
import { runScript } from './scripts.js';

/**
 * Which worker processes are alive, so a dead one's steps are taken over at once instead of when their job
 * locks expire (docs/config.md, `worker.dead_worker_ms`). Each process keeps a heartbeat key that expires
 * `ttlMs` after its last beat, and an entry in the registry naming the BullMQ worker ids its lock tokens start
 * with. A registered process without a heartbeat is dead: its locks can be released.
 */

/**
 * A worker process's registry entry. Version 2 (decision 0049): its capabilities list `contract_rules`.
 */
const entrySchema = z.strictObject({
  v: z.literal(2),
  /** The ids of the process's BullMQ workers (one per shard): each lock token starts with one and ':'. */
  bullmq_ids: z.array(z.string()),
  pid: z.number().int(),
  started_at: z.iso.datetime(),
  /** What GET /v1/system shows of the process (absent in entries of older workers). */
  host: z.string().max(255).optional(),
  concurrency: z.number().int().positive().optional(),
  shards: z.array(z.number().int().nonnegative()).optional(),
  /** What the process can serve, by kind (decision 0031; absent in entries of older workers). */
  capabilities: capabilitiesSchema.optional(),
  /**
   * The name (CLIENT SETNAME) of the process's own connection (decision 0045): while Redis lists none by
   * this name, the process is gone. Absent in entries of older workers, which only the heartbeat judges.
   */
  connection_name: z.string().min(1).max(255).optional(),
});

/** What a process says of itself in its entry, beside its lock-token ids. */
export interface WorkerAbout {
  host: string;
  concurrency: number;
  shards: readonly number[];
  /** What it can serve (decision 0031). */
  capabilities?: Capabilities;
}

/** A registered worker process as GET /v1/system shows it. */
export interface RegisteredWorker {
  id: string;
  host: string | null;
  pid: number;
  concurrency: number | null;
  shards: number[] | null;
  started_at: string;
  /** When it last beat (null: its heartbeat expired, it is dead and not yet taken over). */
  last_heartbeat_at: string | null;
  alive: boolean;
  /** What it can serve, by kind (null: a worker of a version that did not say). */
  capabilities: { [Kind in CapabilityKind]: string[] } | null;
}

/** Every registered process, live or dead and not yet taken over (one round trip per 2 commands). */
export async function readWorkers(redis: RedisClient, space: KeySpace): Promise<RegisteredWorker[]> {
  const keys = registryKeys(space);
  const entries = Object.entries(await redis.hgetall(keys.registry)).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return [];
  const beats = await redis.mget(...entries.map(([id]) => keys.heartbeat(id)));
  return entries.map(([id, json], index) => {
    const entry = parseJsonRecord(entrySchema, json, `worker registry entry ${id}`);
    const beat = beats[index] ?? null;
    // Older workers beat with '1': alive, time unknown.
    const beatAt = beat !== null && /^\d{4}-/.test(beat) ? beat : null;
    return {
      id,
      host: entry.host ?? null,
      pid: entry.pid,
      concurrency: entry.concurrency ?? null,
      shards: entry.shards ? [...entry.shards] : null,
      started_at: entry.started_at,
      last_heartbeat_at: beatAt,
      alive: beat !== null,
      capabilities: entry.capabilities ?? null,
    };
  });
}

export interface DeadWorker {
  id: string;
  bullmqIds: readonly string[];
}

/** A registered process (other than the one asking), as the dead worker watch judges it. */
export interface RegisteredProcess extends DeadWorker {
  /** The name its own connection carries (absent: an older worker; only its heartbeat tells). */
  connectionName: string | undefined;
}

function registryKeys(space: KeySpace) {
  // A hash tag of its own: the registry and every heartbeat are in one slot.
  const base = `${space.prefix}:{workers}`;
  return { registry: `${base}:registry`, heartbeat: (id: string) => `${base}:heartbeat:${id}` };
}

export class WorkerRegistry {
  private readonly keys: ReturnType<typeof registryKeys>;

  constructor(
    private readonly redis: RedisClient,
    private readonly space: KeySpace,
    readonly id: string,
    private readonly ttlMs: number,
    /** The CLIENT SETNAME of this process's own connection (decision 0045), when others may judge by it. */
    private readonly connectionName?: string,
  ) {
    this.keys = registryKeys(space);
  }

  /** This process's entry as it registered it: written again when a beat finds it gone. */
  private entry: string | undefined;

  async register(bullmqIds: readonly string[], about?: WorkerAbout): Promise<void> {
    const entry = {
      v: 2,
      bullmq_ids: [...bullmqIds],
      pid: process.pid,
      started_at: new Date().toISOString(),
      ...(about ? { host: about.host, concurrency: about.concurrency, shards: [...about.shards] } : {}),
      ...(about?.capabilities ? { capabilities: about.capabilities } : {}),
      ...(this.connectionName ? { connection_name: this.connectionName } : {}),
    };
    this.entry = JSON.stringify(entry);
    await this.redis
      .multi()
      .set(this.keys.heartbeat(this.id), new Date().toISOString(), 'PX', this.ttlMs)
      .hset(this.keys.registry, this.id, this.entry)
      .exec();
  }

  /**
   * Beats, and registers again (the same entry: its ids, what it serves) when its entry is gone: a live
   * process whose beats lapsed (a stalled event loop, Redis away) was taken for dead and its entry removed by
   * another's takeover, and without it no worker would count it live or hand it steps it serves. The beat's
   * time is its value (GET /v1/system shows it); one round trip, as before: the check rides in the same
   * transaction. Returns true when it registered again.
   */
  async beat(): Promise<boolean> {
    const replies = await this.redis
      .multi()
      .set(this.keys.heartbeat(this.id), new Date().toISOString(), 'PX', this.ttlMs)
      .hexists(this.keys.registry, this.id)
      .exec();
    if (this.entry === undefined || replies?.[1]?.[1] !== 0) return false;
    // HSETNX: a takeover that removes it again meanwhile is answered at the next beat.
    await this.redis.hsetnx(this.keys.registry, this.id, this.entry);
    return true;
  }

  /**
   * Every registered process other than this one, and the names of the connections Redis has now (CLIENT
   * LIST), in one round trip. The names are undefined on a Redis Cluster (a process's connections are spread
   * over the masters and reconnect lazily there: decision 0045) and where CLIENT LIST is refused (`refused`).
   */
  async processes(withConnections: boolean): Promise<{
    processes: RegisteredProcess[];
    connectionNames: Set<string> | undefined;
    refused?: Error;
  }> {
    const pipeline = this.redis.pipeline().hgetall(this.keys.registry);
    const listing = withConnections && !(this.redis instanceof Cluster);
    if (listing) pipeline.call('CLIENT', 'LIST', 'TYPE', 'normal');
    const [registry, clients] = (await pipeline.exec()) ?? [];
    if (!registry || registry[0]) throw registry?.[0] ?? new Error('no answer to HGETALL');
    const processes = Object.entries(registry[1] as Record<string, string>)
      .filter(([id]) => id !== this.id)
      .map(([id, json]) => {
        const entry = parseJsonRecord(entrySchema, json, `worker registry entry ${id}`);
        return { id, bullmqIds: entry.bullmq_ids, connectionName: entry.connection_name };
      });
    if (!listing || !clients) return { processes, connectionNames: undefined };
    if (clients[0]) return { processes, connectionNames: undefined, refused: clients[0] };
    return { processes, connectionNames: clientNames(String(clients[1])) };
  }

  /** Which of these processes' heartbeats have expired (one round trip). */
  async withoutHeartbeat(processes: readonly RegisteredProcess[]): Promise<RegisteredProcess[]> {
    if (processes.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const { id } of processes) pipeline.exists(this.keys.heartbeat(id));
    const alive = ((await pipeline.exec()) ?? []).map(([, value]) => value === 1);
    return processes.filter((_, index) => !alive[index]);
  }

  /** A process that stops cleanly leaves nothing to take over. */
  async unregister(): Promise<void> {
    await this.forget(this.id);
  }

  async forget(id: string): Promise<void> {
    await this.redis.multi().del(this.keys.heartbeat(id)).hdel(this.keys.registry, id).exec();
  }

  /**
   * Releases the locks the dead processes hold on active step jobs of a shard (release-dead-lock.lua: only a
   * lock still holding their token), marking each job stalled. Returns the job ids released.
   */
  async releaseLocks(shard: number, dead: readonly DeadWorker[]): Promise<string[]> {
    const queue = `${shardPrefix(this.space, shard)}:${stepQueueName}`;
    const active = await this.redis.lrange(`${queue}:active`, 0, -1);
    if (active.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const jobId of active) pipeline.get(jobLockKey(this.space, shard, jobId));
    const tokens = ((await pipeline.exec()) ?? []).map(([, value]) => value as string | null);
    const prefixes = dead.flatMap((worker) => worker.bullmqIds.map((id) => `${id}:`));
    const released: string[] = [];
    for (const [index, jobId] of active.entries()) {
      const token = tokens[index];
      if (!token || !prefixes.some((prefix) => token.startsWith(prefix))) continue;
      const done = await runScript(
        this.redis,
        'release-dead-lock',
        [jobLockKey(this.space, shard, jobId), `${queue}:stalled`, `${queue}:stalled-check`],
        [token, jobId],
      );
      if (Number(done) === 1) released.push(jobId);
    }
    return released;
  }
}

/** The `name=` of each line of CLIENT LIST (a name has no spaces; an unnamed connection has `name=`). */
export function clientNames(listing: string): Set<string> {
  const names = new Set<string>();
  for (const match of listing.matchAll(/(?:^| )name=(\S*)/gm)) if (match[1]) names.add(match[1]);
  return names;
}

defineRecordKind({
  name: 'worker.registry-entry',
  version: 2,
  schema: entrySchema,
  migrations: {
    // A worker of version 1 did not say which contract rule kinds it has: none, so no step that needs one
    // is handed to it.
    1: (entry) =>
      typeof entry.capabilities === 'object' && entry.capabilities !== null
        ? { ...entry, capabilities: { ...entry.capabilities, contract_rules: [] } }
        : entry,
  },
});
