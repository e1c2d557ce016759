/** How log lines are written: one JSON object a line, or one short human-readable line each. */
export type LogFormat = 'json' | 'pretty';
/** The values of the `log.format` setting: `auto` is `pretty` when the log goes to a terminal, else `json`. */
export const logFormatSettings = ['auto', 'json', 'pretty'] as const;
export type LogFormatSetting = (typeof logFormatSettings)[number];

/** The environment variable that sets the format for one process, over the config's `log.format`. */
export const logFormatVariable = 'RATCHET_LOG_FORMAT';

/** What is wrong with RATCHET_LOG_FORMAT, or undefined when it is unset or valid. */
export function logFormatProblem(env: NodeJS.ProcessEnv): string | undefined {
  const value = env[logFormatVariable];
  if (value === undefined || value === '' || (logFormatSettings as readonly string[]).includes(value)) {
    return undefined;
  }
  return `${logFormatVariable}: must be ${logFormatSettings.join(', ')} (got "${value}"); unset it for auto`;
}

/**
 * The format a process logs in: RATCHET_LOG_FORMAT, else the config's setting, else auto; auto is pretty
 * exactly when the destination is a terminal (a pipe, a file or a log collector gets JSON).
 */
export function resolveLogFormat(options: {
  setting: LogFormatSetting | undefined;
  env: NodeJS.ProcessEnv;
  toTerminal: boolean;
}): LogFormat {
  const problem = logFormatProblem(options.env);
  if (problem !== undefined) throw new Error(problem);
  const fromEnv = options.env[logFormatVariable] as LogFormatSetting | '' | undefined;
  const setting = fromEnv || options.setting || 'auto';
  if (setting === 'auto') return options.toTerminal ? 'pretty' : 'json';
  return setting;
}
