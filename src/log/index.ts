export { createLogger, type Logger, type LoggerOptions, redactedPaths, silentLogger } from './logger.js';
