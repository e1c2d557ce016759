import { didYouMean, type RatchetConfig, sessionToolboxes } from '../../config/index.js';
import { builtinToolboxes } from '../../tools/builtin/index.js';
import type { ToolBox } from '../../tools/index.js';

/** The most toolboxes one server serves (far more than exist: a bound on what a command line may ask). */
export const maxServedToolboxes = 50;

export interface ServedToolboxes {
  toolboxes: ToolBox[];
  /**
   * The tools a person approves first: those any agent of the config marks `requires_approval`, and those
   * named here, so a tool is never easier to call over MCP than through an agent.
   */
  approvalTools: Set<string>;
  /** Releases what the toolboxes hold (the browser's Chromium). */
  close(): Promise<void>;
}

/**
 * The toolboxes named, built from the config's `tools` section (the workspace, sandbox and network
 * settings an agent's calls get) and from those registered in code. Throws an Error naming each name that
 * is unknown or that belongs to a session, with the names that may be served.
 */
export function servedToolboxes(options: {
  names: readonly string[];
  config: RatchetConfig;
  configDir: string;
  codeToolboxes: readonly ToolBox[];
  requiresApproval?: readonly string[];
  /** Where the names come from, for the error (`--toolboxes`, `api.mcp_toolboxes.toolboxes`). */
  source: string;
}): ServedToolboxes {
  const { names, config, source } = options;
  if (names.length === 0) throw new Error(`${source}: name at least one toolbox`);
  if (names.length > maxServedToolboxes) {
    throw new Error(
      `${source}: ${names.length} toolboxes, more than the ${maxServedToolboxes} one server serves`,
    );
  }
  const builtins = builtinToolboxes({ tools: config.tools, configDir: options.configDir });
  const available = [...builtins, ...options.codeToolboxes].filter(
    (toolbox) => !sessionToolboxes.has(toolbox.name),
  );
  const problems: string[] = [];
  const chosen: ToolBox[] = [];
  for (const name of new Set(names)) {
    const toolbox = available.find((candidate) => candidate.name === name);
    if (toolbox) chosen.push(toolbox);
    else if (sessionToolboxes.has(name)) {
      problems.push(`"${name}" works on a session's shared data, which only an agent's run has`);
    } else {
      const hint = didYouMean(
        name,
        available.map((candidate) => candidate.name),
      );
      problems.push(`unknown toolbox "${name}"${hint}`);
    }
  }
  if (problems.length > 0) {
    const servable = available.map((toolbox) => toolbox.name).join(', ');
    throw new Error(`${source}: ${problems.join('; ')} (toolboxes that can be served: ${servable})`);
  }
  const approvalTools = new Set(options.requiresApproval ?? []);
  for (const agent of config.agents) {
    for (const [tool, settings] of Object.entries(agent.tools)) {
      if (settings.requires_approval) approvalTools.add(tool);
    }
  }
  return {
    toolboxes: chosen,
    approvalTools,
    async close() {
      // Only the built-ins built here: toolboxes from code belong to the code that registered them.
      await Promise.allSettled(builtins.map((toolbox) => toolbox.close?.()));
    },
  };
}
