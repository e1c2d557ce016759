import { type Logger, pino } from 'pino';
import { redactSecrets } from '../secrets/index.js';

export type { Logger };

/** Paths whose values never reach a log line. */
export const redactedPaths = [
  'api_key',
  '*.api_key',
  '*.*.api_key',
  'password',
  '*.password',
  'token',
  '*.token',
  'tokens',
  '*.tokens',
  'authorization',
  '*.authorization',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  'redis.url',
  '*.redis.url',
];

export interface LoggerOptions {
  level?: string;
  name?: string;
  /** Where lines go; defaults to stdout. Tests pass a stream to capture them. */
  destination?: pino.DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? process.env.RATCHET_LOG_LEVEL ?? 'info';
  const pinoOptions = {
    level,
    base: { name: options.name ?? 'ratchet', pid: process.pid },
    redact: { paths: redactedPaths, censor: '[redacted]' },
    // Paths catch secrets where we expect them; this catches them by value anywhere in a line (an upstream
    // error that echoes an API key, the message or stack of an unexpected exception).
    hooks: { streamWrite: redactSecrets },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return options.destination ? pino(pinoOptions, options.destination) : pino(pinoOptions);
}

/** A logger that writes nothing, for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

const levelMethods = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);
const ignore = () => undefined;

/**
 * A child logger built on first use: building one costs more than most steps log. A call at a level the
 * parent does not log builds nothing at all.
 */
export function lazyChild(logger: Logger, bindings: () => Record<string, unknown>): Logger {
  let child: Logger | undefined;
  return new Proxy(logger, {
    get(_target, property) {
      if (!child && typeof property === 'string' && levelMethods.has(property)) {
        if (!logger.isLevelEnabled(property)) return ignore;
      }
      child ??= logger.child(bindings());
      const value = Reflect.get(child, property, child);
      return typeof value === 'function' ? value.bind(child) : value;
    },
  });
}
