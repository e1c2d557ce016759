import {
  ConfigError,
  type ParseConfigOptions,
  parseConfigText,
  type RatchetConfig,
} from '../../src/config/index.js';

export interface ConfigParser {
  /** The config that the text parses to; throws as the loader does when it is rejected. */
  parse(text: string, options?: Partial<ParseConfigOptions>): RatchetConfig;
  /** The problems the text is rejected with; fails the test when it is accepted. */
  problemsOf(text: string, options?: Partial<ParseConfigOptions>): string[];
}

/**
 * Parses config text the way these tests do: no environment and `/configs` as the config's folder, then the
 * file's `defaults`, then a call's own options.
 */
export function configParser(defaults: Partial<ParseConfigOptions> = {}): ConfigParser {
  const parse = (text: string, options: Partial<ParseConfigOptions> = {}): RatchetConfig =>
    parseConfigText(text, { env: {}, configDir: '/configs', ...defaults, ...options }).config;
  const problemsOf = (text: string, options: Partial<ParseConfigOptions> = {}): string[] => {
    try {
      parse(text, options);
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
    throw new Error('expected the config to be rejected');
  };
  return { parse, problemsOf };
}
