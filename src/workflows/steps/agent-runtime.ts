import { RatchetError } from '../../errors/index.js';
import { type ToolBox, toolDefinitions } from '../../tools/index.js';
import type { AgentRuntime, StepServices } from './step-context.js';

const inherited = new WeakMap<ReadonlyMap<string, AgentRuntime>, Map<string, AgentRuntime>>();

function configured(services: Pick<StepServices, 'agents'>, name: string): AgentRuntime {
  const agent = services.agents.get(name);
  if (!agent) throw new RatchetError('agent_not_found', `agent "${name}" is not configured on this worker`);
  return agent;
}

/**
 * The agent a run works as: a child run's tools are its agent's own toolboxes followed by those of the agents
 * above it, nearest first (its own win on a name clash). Built once per lineage and worker.
 */
export function runAgent(
  services: Pick<StepServices, 'agents'>,
  name: string,
  lineage: readonly string[] = [],
): AgentRuntime {
  const own = configured(services, name);
  if (lineage.length === 0) return own;
  let cache = inherited.get(services.agents);
  if (!cache) {
    cache = new Map();
    inherited.set(services.agents, cache);
  }
  const key = [name, ...lineage].join('\u0000');
  const cached = cache.get(key);
  if (cached) return cached;
  const toolboxes: ToolBox[] = [];
  for (const toolbox of [name, ...lineage].flatMap((agent) => configured(services, agent).toolboxes)) {
    if (!toolboxes.some((known) => known.name === toolbox.name)) toolboxes.push(toolbox);
  }
  const runtime: AgentRuntime = { ...own, toolboxes, tools: toolDefinitions(toolboxes) };
  cache.set(key, runtime);
  return runtime;
}
