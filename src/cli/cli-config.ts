import { resolve } from 'node:path';
import { ConfigError, type LoadedConfig, loadConfig } from '../config/index.js';
import { knownToolboxes } from '../tools/builtin/index.js';
import type { ToolBox } from '../tools/index.js';
import { CliError } from './cli-error.js';

/** The package's root (the CLI runs from src/cli through tsx, or from dist/cli once built). */
export const packageRoot = resolve(import.meta.dirname, '../..');

/** `--config`, else RATCHET_CONFIG, else the bundled demo config: the same from any working directory. */
export function resolveConfigPath(option: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return option ?? env.RATCHET_CONFIG ?? resolve(packageRoot, 'config/demo.yaml');
}

/** Loads the config a command runs with; a config with problems is a CliError listing all of them (exit 2). */
export function loadCliConfig(option: string | undefined, toolboxes: readonly ToolBox[]): LoadedConfig {
  try {
    return loadConfig(resolveConfigPath(option), {
      knownToolboxes: knownToolboxes(toolboxes),
    });
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message, 2);
    throw error;
  }
}
