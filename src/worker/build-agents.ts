import type { RatchetConfig } from '../config/index.js';
import { RatchetError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { Completer } from '../models/completer.js';
import { providerKind, resolveContextWindow } from '../models/index.js';
import { interactionToolbox } from '../tools/builtin/index.js';
import { findTool, type Tool, type ToolBox, toolDefinitions } from '../tools/index.js';
import type { AgentRuntime } from '../workflows/steps/step-context.js';

/** Builds each provider once and each agent's runtime (model, toolboxes in order, tool definitions). */
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
  const agents = new Map<string, AgentRuntime>();
  for (const agent of config.agents) {
    const completer = completers.get(agent.provider);
    if (!completer) throw new RatchetError('config_invalid', `agents: unknown provider "${agent.provider}"`);
    const agentToolboxes = agent.toolboxes.map((name) => {
      const toolbox = toolboxByName.get(name);
      if (!toolbox) throw new RatchetError('config_invalid', `agents: unknown toolbox "${name}"`);
      return toolbox;
    });
    agentToolboxes.push(interaction);
    agents.set(agent.name, {
      name: agent.name,
      instructions: agent.instructions,
      maxIterations: agent.options.max_iterations,
      stream: agent.options.stream,
      budget: agent.budget,
      completer,
      toolboxes: agentToolboxes,
      // A getter: an MCP server's toolbox changes when the server reconnects or its tool list changes.
      get tools() {
        return toolDefinitions(agentToolboxes);
      },
      provider: providerRuntime(agent.provider),
      approvalTools: new Set(
        Object.entries(agent.tools)
          .filter(([, settings]) => settings.requires_approval)
          .map(([name]) => name),
      ),
    });
  }
  return agents;
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
