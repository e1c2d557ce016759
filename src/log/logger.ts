import { isatty } from 'node:tty';
import { type Logger, pino } from 'pino';
import { redactSecrets } from '../secrets/index.js';
import { type LogFormatSetting, resolveLogFormat } from './log-format.js';
import { colorsAt, terminalLogStream } from './terminal-log.js';

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
  /**
   * Where lines go: `stdout` (the default) or `stderr`, or a stream (tests capture lines with one; an
   * `isTTY` stream counts as a terminal).
   */
  destination?: 'stdout' | 'stderr' | pino.DestinationStream | NodeJS.WritableStream;
  /** The config's `log.format` (RATCHET_LOG_FORMAT overrides it); auto: pretty at a terminal, else JSON. */
  format?: LogFormatSetting | undefined;
  /** Where RATCHET_LOG_FORMAT is read; default process.env. */
  env?: NodeJS.ProcessEnv;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const env = options.env ?? process.env;
  const level = options.level ?? env.RATCHET_LOG_LEVEL ?? 'info';
  const pinoOptions = {
    level,
    base: { name: options.name ?? 'ratchet', pid: process.pid },
    redact: { paths: redactedPaths, censor: '[redacted]' },
    // Paths catch secrets where we expect them; this catches them by value anywhere in a line (an upstream
    // error that echoes an API key, the message or stack of an unexpected exception).
    hooks: { streamWrite: redactSecrets },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  const destination = options.destination ?? 'stdout';
  const fd = destination === 'stdout' ? 1 : destination === 'stderr' ? 2 : undefined;
  const toTerminal = fd === undefined ? (destination as { isTTY?: boolean }).isTTY === true : isatty(fd);
  const format = resolveLogFormat({ setting: options.format, env, toTerminal });
  if (format === 'pretty') {
    const stream = terminalLogStream({
      destination: fd ?? (destination as NodeJS.WritableStream),
      colorize: colorsAt(toTerminal),
    });
    return pino(pinoOptions, stream);
  }
  if (fd === 1) return pino(pinoOptions);
  // Standard error is written synchronously, so lines keep their place among the CLI's own.
  if (fd === 2) return pino(pinoOptions, pino.destination({ fd: 2, sync: true }));
  return pino(pinoOptions, destination as pino.DestinationStream);
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
