import { ConfigError, type RatchetConfig, type ToolboxReference } from '../config/index.js';
import { RatchetError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { Completer } from '../models/completer.js';
import { providerKind, resolveContextWindow } from '../models/index.js';
import { instructionsWithSkills, selectAgentSkills, skillsToolbox } from '../skills/index.js';
import { delegationToolbox, interactionToolbox } from '../tools/builtin/index.js';
import { createToolBox, findTool, type Tool, type ToolBox, toolDefinitions } from '../tools/index.js';
import type { AgentRuntime } from '../workflows/steps/step-context.js';

/**
 * Builds each provider once and each agent's runtime: model, toolboxes in order (narrowed to the tools the
 * agent lists), its skills (described ones behind `load_skill`, the others in its instructions), the
 * interaction tools last. Throws ConfigError for skills that are malformed or unknown.
 */
export function buildAgents(
  config: RatchetConfig,
  configDir: string,
  toolboxes: readonly ToolBox[],
  logger: Logger,
): Map<string, AgentRuntime> {
  const completers = new Map<string, Completer>();
  for (const provider of config.providers) {
    const kind = providerKind(provider.kind);
    if (!kind)
      throw new RatchetError('config_invalid', `providers: unknown provider kind "${provider.kind}"`);
    completers.set(
      provider.name,
      kind.create(provider, { configDir, logger: logger.child({ provider: provider.name }) }),
    );
  }
  const toolboxByName = new Map(toolboxes.map((toolbox) => [toolbox.name, toolbox]));
  const providerByName = new Map(config.providers.map((provider) => [provider.name, provider]));
  const providerRuntime = (name: string) => {
    const provider = providerByName.get(name);
    if (!provider) throw new RatchetError('config_invalid', `agents: unknown provider "${name}"`);
    return {
      name,
      model: provider.model,
      price: config.pricing[provider.model],
      rateLimit: provider.rate_limit,
      contextWindow: resolveContextWindow({
        provider,
        defaultContextWindows: config.default_context_windows,
      }),
    };
  };
  const interaction = interactionToolbox();
  const skillsOf = selectAgentSkills(config, configDir);
  const delegation = delegationToolbox(
    config.agents.map((agent) => ({ name: agent.name, description: agent.description })),
  );
  const agents = new Map<string, AgentRuntime>();
  config.agents.forEach((agent, agentIndex) => {
    const completer = completers.get(agent.provider);
    if (!completer) throw new RatchetError('config_invalid', `agents: unknown provider "${agent.provider}"`);
    const agentToolboxes = agent.toolboxes.map((reference, toolboxIndex) =>
      resolveToolbox(reference, toolboxByName, `agents[${agentIndex}].toolboxes[${toolboxIndex}]`),
    );
    const skills = skillsOf.get(agent.name) ?? [];
    const skillTools = skillsToolbox(skills);
    if (skillTools) agentToolboxes.push(skillTools);
    agentToolboxes.push(interaction);
    if (agent.options.delegate ?? config.agents.length > 1) agentToolboxes.push(delegation);
    agents.set(agent.name, {
      name: agent.name,
      description: agent.description,
      prefix: agent.prefix,
      instructions: instructionsWithSkills(agent.instructions, skills),
      maxIterations: agent.options.max_iterations,
      stream: agent.options.stream,
      budget: agent.budget,
      completer,
      toolboxes: agentToolboxes,
      tools: toolDefinitions(agentToolboxes),
      provider: providerRuntime(agent.provider),
      approvalTools: new Set(
        Object.entries(agent.tools)
          .filter(([, settings]) => settings.requires_approval)
          .map(([name]) => name),
      ),
    });
  });
  return agents;
}

/** A toolbox an agent refers to, narrowed to the tools it lists. */
function resolveToolbox(
  reference: ToolboxReference,
  toolboxByName: ReadonlyMap<string, ToolBox>,
  path: string,
): ToolBox {
  const name = typeof reference === 'string' ? reference : reference.name;
  const toolbox = toolboxByName.get(name);
  if (!toolbox) throw new RatchetError('config_invalid', `${path}: unknown toolbox "${name}"`);
  if (typeof reference === 'string' || reference.tools === undefined) return toolbox;
  const listed = reference.tools;
  // The loader checks tool names when it knows the toolbox's tools; this covers toolboxes it did not.
  const unknown = listed.flatMap((tool, index) =>
    toolbox.tools.some((candidate) => candidate.name === tool)
      ? []
      : [`${path}.tools[${index}]: unknown tool "${tool}" in toolbox "${name}"`],
  );
  if (unknown.length > 0) throw new ConfigError('agents', unknown);
  return createToolBox(
    name,
    toolbox.tools.filter((tool) => listed.includes(tool.name)),
  );
}

/** Looks up the tool an agent would call by a name (for checking edited arguments of an approval in the API). */
export function toolLookup(
  agents: ReadonlyMap<string, AgentRuntime> | ReadonlyMap<string, { toolboxes: readonly ToolBox[] }>,
): (agent: string, toolName: string) => Tool | undefined {
  return (agent, toolName) => {
    const runtime = agents.get(agent);
    return runtime ? findTool(runtime.toolboxes, toolName) : undefined;
  };
}
