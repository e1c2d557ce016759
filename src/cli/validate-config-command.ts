import { ConfigError, formatConfigSummary, loadConfig } from '../config/index.js';
import { selectAgentSkills } from '../skills/index.js';
import { knownToolboxes } from '../tools/builtin/index.js';
import type { ToolBox } from '../tools/index.js';

export interface CommandOutput {
  out: (line: string) => void;
  err: (line: string) => void;
}

/**
 * `ratchet config validate F`: "ok" and a summary (exit 0), or every problem with its path (exit 1); the
 * skills are checked too.
 */
export function validateConfigCommand(
  file: string,
  toolboxes: readonly ToolBox[],
  output: CommandOutput,
): number {
  try {
    const loaded = loadConfig(file, { knownToolboxes: knownToolboxes(toolboxes) });
    // The skills a worker would read at start: malformed files and unknown names are config problems too.
    selectAgentSkills(loaded.config, loaded.configDir);
    output.out('ok');
    output.out(formatConfigSummary(loaded));
    return 0;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    output.err(error.message);
    output.err(`${error.problems.length} problem${error.problems.length === 1 ? '' : 's'}`);
    return 1;
  }
}
