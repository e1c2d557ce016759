import { effectKinds, type RatchetConfig } from '../config/index.js';
import { RatchetError } from '../errors/index.js';
import type { Extensions } from '../extensions/index.js';
import type { ToolBox } from '../tools/index.js';
import {
  builtinMiddleware,
  type Capabilities,
  capabilityProblems,
  normalizedCapabilities,
  teamKinds,
} from '../workflows/index.js';
import type { Registry } from './build-agents.js';

/**
 * What this worker process can serve (decision 0031), as its heartbeat record advertises it: the agents,
 * handoff groups and teams it built, its providers, every toolbox it has (built-in, registered in code, MCP
 * servers) and their tools, the effect, middleware, coordinator and stop-condition kinds it knows (built-in
 * and registered), its MCP servers, the contract rule kinds registered in code. Throws when a list is over its bound (capabilityLimits).
 */
export function workerCapabilities(input: {
  config: RatchetConfig;
  registry: Pick<Registry, 'agents' | 'handoffs' | 'teams' | 'builtinToolboxes'>;
  /** Toolboxes registered in code and the MCP servers' toolboxes. */
  toolboxes: readonly ToolBox[];
  extensions: Extensions | undefined;
}): Capabilities {
  const { config, registry, extensions } = input;
  const toolboxes = [...registry.builtinToolboxes, ...input.toolboxes];
  const kinds = teamKinds(extensions?.coordinators, extensions?.stopConditions);
  const capabilities = normalizedCapabilities({
    agents: [...registry.agents.keys(), ...registry.handoffs.keys(), ...registry.teams.keys()],
    providers: config.providers.map((provider) => provider.name),
    toolboxes: toolboxes.map((toolbox) => toolbox.name),
    tools: toolboxes.flatMap((toolbox) => toolbox.tools.map((tool) => tool.name)),
    effects: [...effectKinds, ...(extensions?.effects ?? []).map((effect) => effect.kind)],
    middleware: [
      ...builtinMiddleware.map((middleware) => middleware.name),
      ...(extensions?.middleware ?? []).map((middleware) => middleware.name),
    ],
    coordinators: [...kinds.coordinators.keys()],
    stop_conditions: [...kinds.stopConditions.keys()],
    mcp_servers: config.mcp_servers.map((server) => server.name),
    contract_rules: (extensions?.contractRules ?? []).map((rule) => rule.kind),
  });
  const problems = capabilityProblems(capabilities);
  if (problems.length > 0) {
    throw new RatchetError('config_invalid', `worker capabilities: ${problems.join('; ')}`);
  }
  return capabilities;
}
