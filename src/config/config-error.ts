import { RatchetError } from '../errors/index.js';

/** A config that cannot be used, with every problem found, each as `path: message`. */
export class ConfigError extends RatchetError {
  readonly problems: string[];

  constructor(source: string, problems: readonly string[], options: { cause?: unknown } = {}) {
    super(
      'config_invalid',
      `invalid config ${source}:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`,
      {
        ...options,
        details: { source, problems: [...problems] },
      },
    );
    this.name = 'ConfigError';
    this.problems = [...problems];
  }
}
