import { Cluster, type Redis } from 'ioredis';
import { RatchetError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { compareStreamIds } from '../workflows/stream-ids.js';
import { commandTimeoutOf, nodeClientFor, type RedisClient } from './connection.js';
import { redisOutageLog } from './redis-outage.js';

export interface EventHubOptions {
  /** The command connection: readers are duplicated from it, and unblocks are sent on it. */
  redis: RedisClient;
  /** Followers served at once; one more is refused with `too_many_followers`. */
  maxFollowers: number;
  logger: Logger;
  /** How long one blocking read waits before it is sent again (default 5 s). */
  blockMs?: number;
  /** Stream keys one reader watches at most; more keys open another reader (default 500). */
  keysPerReader?: number;
}

export type WaitOutcome = 'news' | 'stopped';

/** A follower's place in the hub, held until it is released (its generator ended or its signal aborted). */
export interface FollowerLease {
  /**
   * Resolves `news` once the stream at `key` has an entry after `after` (now, or when one is added), and
   * `stopped` when the follower is released or the hub closes.
   */
  waitForNews(key: string, after: string): Promise<WaitOutcome>;
  release(): void;
}

interface Waiter {
  key: string;
  after: string;
  settle(outcome: WaitOutcome): void;
}

const defaultBlockMs = 5_000;
const defaultKeysPerReader = 500;

/**
 * Serves every event follower of a process from a bounded number of Redis connections. It only rings
 * the bell: readers block on one XREAD over the streams that followers wait on, and wake the followers
 * of a stream when it gets an entry after their position; each follower then reads its own events with
 * non-blocking XRANGE on the command connection, at its own pace. So a slow client delays nobody, a
 * follower's position is its own (no gap, no duplicate), and connections are one per `keysPerReader`
 * watched streams, whatever the number of followers.
 */
export class EventHub {
  private followers = 0;
  private closed = false;
  private readonly readers: HubReader[] = [];
  private readonly readerOfKey = new Map<string, HubReader>();
  private readonly keysPerReader: number;

  constructor(private readonly options: EventHubOptions) {
    this.keysPerReader = options.keysPerReader ?? defaultKeysPerReader;
  }

  /** The number of followers holding a lease now. */
  get followerCount(): number {
    return this.followers;
  }

  /**
   * Takes a follower's place; throws `too_many_followers` when `maxFollowers` are served already. The
   * lease is released when the signal aborts, or by `release()`, whichever comes first.
   */
  join(signal: AbortSignal): FollowerLease {
    if (this.closed) throw new RatchetError('shutting_down', 'the event hub is closed');
    if (this.followers >= this.options.maxFollowers) {
      throw new RatchetError(
        'too_many_followers',
        `this process already serves ${this.options.maxFollowers} event followers (api.max_followers)`,
      );
    }
    this.followers += 1;
    let released = false;
    let waiting: Waiter | undefined;
    const release = () => {
      if (released) return;
      released = true;
      this.followers -= 1;
      signal.removeEventListener('abort', release);
      waiting?.settle('stopped');
    };
    signal.addEventListener('abort', release, { once: true });
    if (signal.aborted) release();
    return {
      waitForNews: (key, after) => {
        if (released || this.closed) return Promise.resolve('stopped');
        return new Promise<WaitOutcome>((resolve) => {
          const waiter: Waiter = {
            key,
            after,
            settle: (outcome) => {
              if (waiting !== waiter) return;
              waiting = undefined;
              this.forget(waiter);
              resolve(outcome);
            },
          };
          waiting = waiter;
          this.readerFor(key).add(waiter);
        });
      },
      release,
    };
  }

  /** Ends every wait (followers see `stopped`) and closes the readers. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled(this.readers.map((reader) => reader.close()));
  }

  /**
   * The reader of a stream: one that reads streams of the same hash tag (a shard: one XREAD may name keys of
   * one slot only, which a Redis Cluster enforces) and has room.
   */
  private readerFor(key: string): HubReader {
    const known = this.readerOfKey.get(key);
    if (known) return known;
    const tag = hashTagOf(key);
    let reader = this.readers.find(
      (candidate) => candidate.tag === tag && candidate.keyCount < this.keysPerReader,
    );
    if (!reader) {
      reader = new HubReader({
        commands: this.options.redis,
        blockMs: this.options.blockMs ?? defaultBlockMs,
        logger: this.options.logger,
        name: `ratchet-events-hub-${this.readers.length}`,
        tag,
        slotKey: key,
      });
      this.readers.push(reader);
    }
    this.readerOfKey.set(key, reader);
    return reader;
  }

  private forget(waiter: Waiter): void {
    const reader = this.readerOfKey.get(waiter.key);
    if (reader?.remove(waiter) === 'key_unwatched') this.readerOfKey.delete(waiter.key);
  }
}

/**
 * One blocking connection and its loop: XREAD COUNT 1 BLOCK over every watched stream, each from the
 * earliest position a follower waits at. A wait added while a read is blocked without it interrupts the
 * read (CLIENT UNBLOCK), so the next read includes it.
 */
/** The hash tag of a key (`{3}` of `ratchet:{3}:session:…`), or the whole key when it has none. */
function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  const close = open >= 0 ? key.indexOf('}', open + 1) : -1;
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

class HubReader {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private connection: Redis | undefined;
  /** On a cluster: a second connection to the read's node, for CLIENT UNBLOCK. */
  private unblockConnection: Redis | undefined;
  private clientId: string | undefined;
  /** The positions of the read in flight, by key; undefined between reads. */
  private reading: Map<string, string> | undefined;
  private round = 0;
  private unblockingRound = -1;
  private wakeIdle: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly options: {
      commands: RedisClient;
      blockMs: number;
      logger: Logger;
      name: string;
      /** The hash tag of every stream this reader reads. */
      tag: string;
      /** A key of that tag: where its slot is served. */
      slotKey: string;
    },
  ) {}

  get tag(): string {
    return this.options.tag;
  }

  get keyCount(): number {
    return this.waiters.size;
  }

  add(waiter: Waiter): void {
    if (this.closed) {
      waiter.settle('stopped');
      return;
    }
    let waiting = this.waiters.get(waiter.key);
    if (!waiting) {
      waiting = new Set();
      this.waiters.set(waiter.key, waiting);
    }
    waiting.add(waiter);
    this.loop ??= this.run();
    if (this.wakeIdle) {
      const wake = this.wakeIdle;
      this.wakeIdle = undefined;
      wake();
      return;
    }
    const position = this.reading?.get(waiter.key);
    if (this.reading && (position === undefined || compareStreamIds(waiter.after, position) < 0)) {
      this.unblock();
    }
  }

  remove(waiter: Waiter): 'key_unwatched' | 'key_watched' {
    const waiting = this.waiters.get(waiter.key);
    waiting?.delete(waiter);
    if (waiting && waiting.size > 0) return 'key_watched';
    this.waiters.delete(waiter.key);
    return 'key_unwatched';
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiting of [...this.waiters.values()]) {
      for (const waiter of [...waiting]) waiter.settle('stopped');
    }
    this.wakeIdle?.();
    // Not QUIT: it would wait behind the blocked read. Cutting the socket ends the read, and the loop.
    this.connection?.disconnect();
    this.unblockConnection?.disconnect();
    await this.loop;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.closed) {
      if (this.waiters.size === 0) {
        await new Promise<void>((resolve) => {
          this.wakeIdle = resolve;
        });
        continue;
      }
      try {
        await this.readOnce();
        failures = 0;
      } catch (error) {
        this.reading = undefined;
        if (this.closed) return;
        failures += 1;
        // The slot moved to another node (a cluster failover or resharding): connect to where it is now.
        if (error instanceof Error && /^(MOVED|ASK)\b/.test(error.message)) this.reconnect();
        // Redis away or frozen: followers keep waiting (their clients keep their streams) until it is back.
        // A connection error is the process's Redis outage (told once, with its end); another is logged here.
        if (!redisOutageLog(this.options.logger).absorb(error) && failures === 1) {
          this.options.logger.warn({ err: error }, 'event hub read failed; retrying');
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 50 * 2 ** failures)));
      }
    }
  }

  private reconnect(): void {
    this.connection?.disconnect();
    this.unblockConnection?.disconnect();
    this.connection = undefined;
    this.unblockConnection = undefined;
    this.clientId = undefined;
  }

  /** Where CLIENT UNBLOCK goes: the command connection on one Redis, the read's node on a cluster. */
  private unblocker(): RedisClient {
    if (this.options.commands instanceof Cluster) {
      if (!this.unblockConnection) {
        this.unblockConnection = nodeClientFor(this.options.commands, this.options.slotKey, {
          connectionName: `${this.options.name}-unblock`,
        });
        this.unblockConnection.on('error', () => {});
      }
      return this.unblockConnection;
    }
    return this.options.commands;
  }

  private async readOnce(): Promise<void> {
    const connection = this.open();
    if (connection.status !== 'ready') await readyOrTimeout(connection, 1_000);
    this.clientId ??= String(await connection.call('CLIENT', 'ID'));
    const keys = [...this.waiters.keys()];
    const positions = keys.map((key) => earliestPosition(this.waiters.get(key)));
    this.reading = new Map(keys.map((key, index) => [key, positions[index] ?? '0-0']));
    this.round += 1;
    const reply = (await connection.call(
      'XREAD',
      'COUNT',
      '1',
      'BLOCK',
      String(this.options.blockMs),
      'STREAMS',
      ...keys,
      ...[...this.reading.values()],
    )) as [string, [string, string[]][]][] | null;
    this.reading = undefined;
    for (const [key, entries] of reply ?? []) {
      const newest = entries.at(-1)?.[0];
      if (newest !== undefined) this.announce(key, newest);
    }
  }

  private announce(key: string, newest: string): void {
    for (const waiter of [...(this.waiters.get(key) ?? [])]) {
      if (compareStreamIds(waiter.after, newest) < 0) waiter.settle('news');
    }
  }

  /**
   * Ends the blocked read early. CLIENT UNBLOCK answers 0 when the read has not reached Redis yet: then it
   * is tried again, as long as the same read is in flight.
   */
  private unblock(): void {
    const round = this.round;
    if (this.unblockingRound === round || this.clientId === undefined) return;
    this.unblockingRound = round;
    const clientId = this.clientId;
    const attempt = async () => {
      for (let tries = 0; tries < 50; tries += 1) {
        if (this.closed || this.reading === undefined || this.round !== round) return;
        // On the connection's own node: a cluster client would send it to any node.
        if ((await this.unblocker().call('CLIENT', 'UNBLOCK', clientId)) === 1) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    attempt().catch(() => {
      // Redis trouble: the read ends by its block time, or fails and is sent again.
    });
  }

  /**
   * The blocking connection: no offline queue and no retry of a read that was cut (the loop sends it
   * again, with the client id of the new connection), and a command timeout past the block time, so a
   * frozen Redis fails the read instead of hanging it for ever.
   */
  private open(): Redis {
    if (this.connection) return this.connection;
    const commandTimeout = (commandTimeoutOf(this.options.commands) ?? defaultBlockMs) + this.options.blockMs;
    // On a cluster, a connection to the master of the streams' slot (a read cut by a moved slot is opened again).
    const connection = nodeClientFor(this.options.commands, this.options.slotKey, {
      connectionName: this.options.name,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      enableAutoPipelining: false,
      autoResendUnfulfilledCommands: false,
      commandTimeout,
    });
    connection.on('error', () => {
      // The loop reports failed reads.
    });
    connection.on('ready', () => {
      this.clientId = undefined;
    });
    this.connection = connection;
    return connection;
  }
}

function earliestPosition(waiting: Set<Waiter> | undefined): string {
  let earliest: string | undefined;
  for (const waiter of waiting ?? []) {
    if (earliest === undefined || compareStreamIds(waiter.after, earliest) < 0) earliest = waiter.after;
  }
  return earliest ?? '0-0';
}

function readyOrTimeout(connection: RedisClient, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const finish = (error?: Error) => {
      clearTimeout(timer);
      connection.off('ready', onReady);
      connection.off('error', onError);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => finish();
    const onError = (error: Error) => finish(error);
    const timer = setTimeout(() => finish(new Error('Redis is not ready')), timeoutMs);
    connection.once('ready', onReady);
    connection.once('error', onError);
  });
}
