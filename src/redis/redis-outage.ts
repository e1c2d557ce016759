import type { Logger } from '../log/index.js';

/** Error codes of a connection that failed or broke: Redis is down, restarting, or cannot be reached. */
const connectionCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** What ioredis and BullMQ say when a connection is gone, or Redis is loading its data after a restart. */
const connectionMessages =
  /^(Connection is closed|Stream isn't writeable|Reached the max retries per request limit|LOADING |connect ETIMEDOUT)/;

/** Whether an error is about reaching Redis (a fault of the connection), not about a command. */
export function isRedisConnectionError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message, name } = error as { code?: unknown; message?: unknown; name?: unknown };
  return (
    (typeof code === 'string' && connectionCodes.has(code)) ||
    name === 'MaxRetriesPerRequestError' ||
    (typeof message === 'string' && connectionMessages.test(message))
  );
}

/**
 * One process's account of Redis outages in its log. Every connection and BullMQ client of the process
 * reports its connection errors here instead of logging them: an outage is one line when it starts, a
 * reminder every `reminderMs` while it lasts (only when errors go on), and "Redis is back" when a connection
 * is ready again. Without it a 10 s outage was hundreds of lines, a stack trace each, and its end none.
 */
export interface RedisOutageLog {
  /** Takes a connection error (true) into the outage's account; any other error is the caller's (false). */
  absorb(error: unknown): boolean;
  /** A connection is ready: the outage, if one was going on, ends. */
  ready(): void;
}

const outageLogs = new WeakMap<Logger, RedisOutageLog>();

/** The outage log of this logger: the connections of a process share it, so an outage is told once. */
export function redisOutageLog(logger: Logger): RedisOutageLog {
  let log = outageLogs.get(logger);
  if (!log) {
    log = createRedisOutageLog({ logger });
    outageLogs.set(logger, log);
  }
  return log;
}

export function createRedisOutageLog(options: {
  logger: Logger;
  reminderMs?: number;
  now?: () => number;
}): RedisOutageLog {
  const { logger } = options;
  const reminderMs = options.reminderMs ?? 30_000;
  const now = options.now ?? Date.now;
  let outage: { since: number; lastLine: number; errors: number } | undefined;
  return {
    absorb(error) {
      if (!isRedisConnectionError(error)) return false;
      const at = now();
      const reason = (error as Error).message;
      if (!outage) {
        outage = { since: at, lastLine: at, errors: 1 };
        logger.warn(
          { redis_error: reason },
          `Redis is unreachable (${reason}): retrying; steps wait until it is back`,
        );
        return true;
      }
      outage.errors += 1;
      if (at - outage.lastLine >= reminderMs) {
        outage.lastLine = at;
        logger.warn(
          { redis_error: reason, down_ms: at - outage.since, errors: outage.errors },
          `Redis is still unreachable after ${seconds(at - outage.since)} (${reason}): retrying`,
        );
      }
      return true;
    },
    ready() {
      if (!outage) return;
      const downMs = now() - outage.since;
      logger.warn(
        { down_ms: downMs, errors: outage.errors },
        `Redis is back (unreachable for ${seconds(downMs)})`,
      );
      outage = undefined;
    },
  };
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
