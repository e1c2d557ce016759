import { RatchetError } from '../../../errors/index.js';
import { type ToolBox, toolDefinitions } from '../../../tools/index.js';
import type { HandoffGroup } from '../../handoff-toolbox.js';
import { handoffToolbox } from '../../handoff-toolbox.js';
import type { RunInheritance } from '../../job-data.js';
import type { AgentRuntime, PinnedDefinition, StepServices, TeamService } from './step-context.js';

const derived = new WeakMap<ReadonlyMap<string, AgentRuntime>, Map<string, AgentRuntime>>();

type Registry = Pick<StepServices, 'agents' | 'handoffs' | 'teams'>;
type WorkerRegistry = Registry & Pick<StepServices, 'keyPrefix' | 'definitions'>;

/**
 * The recorded definition a run works under, when it differs from this worker's config (decision 0030);
 * undefined when the run has none or it is this worker's current one (then the config's runtimes serve it).
 */
export function pinnedDefinition(
  services: Pick<StepServices, 'definitions'>,
  hash: string | undefined,
): PinnedDefinition | undefined {
  const { definitions } = services;
  if (hash === undefined || !definitions || definitions.isCurrent(hash)) return undefined;
  const pinned = definitions.pinned(hash);
  if (!pinned) throw new RatchetError('internal', `definition ${hash} was not read before the step used it`);
  return pinned;
}

/** The handoff group a run of `name` is, as its definition recorded it; undefined when it is not a group. */
export function runGroup(services: WorkerRegistry, name: string, hash?: string): HandoffGroup | undefined {
  const pinned = pinnedDefinition(services, hash);
  if (pinned) return pinned.handoff;
  return services.handoffs.get(name);
}

/** Whether `name` is an agent the run can work as (its definition's, or this worker's). */
export function isRunAgent(services: WorkerRegistry, name: string, hash?: string): boolean {
  const pinned = pinnedDefinition(services, hash);
  if (pinned) return pinned.agent(name) !== undefined;
  return services.agents.has(name);
}

/**
 * The team a team run works as: as its definition recorded it (its coordinator and members, decision 0030),
 * or this worker's config's when the run has none or it is this worker's current one.
 */
export function runTeam(services: WorkerRegistry, name: string, hash?: string): TeamService {
  const pinned = pinnedDefinition(services, hash);
  const team = pinned ? pinned.team() : services.teams.get(name);
  if (!team) throw notOnThisWorker(services, `team "${name}"`);
  return team;
}

function configured(services: WorkerRegistry, name: string): AgentRuntime {
  const agent = services.agents.get(name);
  if (!agent) throw notOnThisWorker(services, `agent "${name}"`);
  return agent;
}

/**
 * A step for an agent, handoff group or team this worker's config does not have. A run's steps go to every
 * worker on its Redis and key prefix, so the likely cause is another config's workers there (`ratchet dev`
 * with the demo config while `ratchet run --config team.yaml` runs, both on one prefix): the error says so.
 */
export function notOnThisWorker(services: WorkerRegistry, what: string): RatchetError {
  const names = runnableNames(services);
  const known = names.length > 8 ? `${names.slice(0, 8).join(', ')}, …` : names.join(', ');
  return new RatchetError(
    'agent_not_found',
    `${what} is not configured on this worker (its config has ${known}): the step was taken by a worker ` +
      `whose config lacks it, most likely because another config's workers share this Redis and key prefix ` +
      `"${services.keyPrefix}". Give each config its own redis.prefix, or run the run's own config on its workers`,
  );
}

/** Whether a run can be started with this name: an agent, a handoff group or a team. */
export function isRunnable(services: Registry, name: string): boolean {
  return services.agents.has(name) || services.handoffs.has(name) || services.teams.has(name);
}

/** The display prefix of an agent, handoff group or team. */
export function prefixOf(services: Registry, name: string): string {
  return (
    services.agents.get(name)?.prefix ??
    services.handoffs.get(name)?.prefix ??
    services.teams.get(name)?.prefix ??
    '🤖'
  );
}

/** What an agent, handoff group or team does (its config `description`). */
export function descriptionOf(services: Registry, name: string): string {
  return (
    services.agents.get(name)?.description ??
    services.handoffs.get(name)?.describe(name) ??
    services.teams.get(name)?.description ??
    ''
  );
}

/** Every name a run can be started with. */
export function runnableNames(services: Registry): string[] {
  return [...services.agents.keys(), ...services.handoffs.keys(), ...services.teams.keys()];
}

/**
 * The agent a run works as. A child run's tools are its agent's own toolboxes followed by those of the agents
 * above it, nearest first (its own win on a name clash); a member of a handoff group gets its transfer tools
 * first. What the run inherited when it started (decision 0047) decides the ancestors' toolboxes (as the
 * definitions they worked under have them) and the `options.delegate` default; a run that recorded none
 * takes both from this worker's config. Built once per combination and worker.
 */
export function runAgent(
  services: WorkerRegistry,
  name: string,
  lineage: readonly string[] = [],
  group?: string,
  /** The hash of the definition the run works under (decision 0030); absent: this worker's config. */
  definition?: string,
  inherited?: RunInheritance,
): AgentRuntime {
  const pinned = pinnedDefinition(services, definition);
  const delegates = inherited?.delegate_default;
  const own = withDelegation(pinned?.agent(name) ?? configured(services, name), delegates);
  const recorded = inherited && inherited.lineage.length === lineage.length ? inherited.lineage : undefined;
  const ancestors: { name: string; hash?: string | undefined }[] = recorded
    ? lineage.map((ancestor, index) => ({ name: ancestor, hash: recorded[index] }))
    : lineage.filter((ancestor) => services.agents.has(ancestor)).map((ancestor) => ({ name: ancestor }));
  if (ancestors.length === 0 && group === undefined) return own;
  const handoff = group === undefined ? undefined : (pinned?.handoff ?? services.handoffs.get(group));
  let cache = derived.get(services.agents);
  if (!cache) {
    cache = new Map();
    derived.set(services.agents, cache);
  }
  const key = [
    pinned ? (definition ?? '') : '',
    group ?? '',
    name,
    String(delegates ?? ''),
    ...ancestors.map((ancestor) => `${ancestor.name}@${ancestor.hash ?? ''}`),
  ].join('\u0000');
  const cached = cache.get(key);
  if (cached) return cached;
  if (group !== undefined && !handoff) throw notOnThisWorker(services, `handoff group "${group}"`);
  const toolboxes: ToolBox[] = handoff ? [handoffToolbox(handoff, name)] : [];
  // An agent above works as the definition it worked under when this run started had it, this worker's
  // config serving the definitions it has itself.
  const above = (ancestor: { name: string; hash?: string | undefined }) =>
    withDelegation(
      (ancestor.hash === undefined
        ? undefined
        : pinnedDefinition(services, ancestor.hash)?.agent(ancestor.name)) ??
        configured(services, ancestor.name),
      delegates,
    );
  for (const toolbox of [own, ...ancestors.map(above)].flatMap((agent) => agent.toolboxes)) {
    if (!toolboxes.some((known) => known.name === toolbox.name)) toolboxes.push(toolbox);
  }
  const runtime = withToolboxes(own, toolboxes);
  cache.set(key, runtime);
  return runtime;
}

/** The agent with other toolboxes; `tools` a getter, as for the agent itself (an MCP server's list changes). */
function withToolboxes(agent: AgentRuntime, toolboxes: readonly ToolBox[]): AgentRuntime {
  return {
    ...agent,
    toolboxes,
    get tools() {
      return toolDefinitions(toolboxes);
    },
  };
}

const delegationSet = new WeakMap<AgentRuntime, AgentRuntime>();

/**
 * The agent with the delegation tools as the run's recorded `options.delegate` default says (decision 0047),
 * when the agent leaves it to the default; as it is otherwise (or with no recorded default).
 */
function withDelegation(agent: AgentRuntime, delegates: boolean | undefined): AgentRuntime {
  const delegation = agent.defaultDelegation;
  if (delegates === undefined || !delegation) return agent;
  if (agent.toolboxes.includes(delegation) === delegates) return agent;
  let other = delegationSet.get(agent);
  if (!other) {
    other = withToolboxes(
      agent,
      delegates
        ? [...agent.toolboxes, delegation]
        : agent.toolboxes.filter((toolbox) => toolbox !== delegation),
    );
    delegationSet.set(agent, other);
  }
  return other;
}
