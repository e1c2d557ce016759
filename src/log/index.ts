export {
  type LogFormat,
  type LogFormatSetting,
  logFormatProblem,
  logFormatSettings,
  logFormatVariable,
} from './log-format.js';
export {
  createLogger,
  type Logger,
  type LoggerOptions,
  lazyChild,
  redactedPaths,
  silentLogger,
} from './logger.js';
