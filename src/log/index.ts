export {
  createLogger,
  type Logger,
  type LoggerOptions,
  lazyChild,
  redactedPaths,
  silentLogger,
} from './logger.js';
