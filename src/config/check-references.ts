import type { ConfigProblem } from './config-issues.js';
import { didYouMean } from './suggest.js';

/**
 * A toolbox that exists: its name, or its name and tools (a ToolBox fits) so that agents' tool lists can
 * be checked too.
 */
export type KnownToolbox = string | { name: string; tools?: readonly { name: string }[] };

export interface ReferenceCheckOptions {
  /** When given, every agent toolbox must be one of these or an MCP server's name. */
  knownToolboxes?: readonly KnownToolbox[] | undefined;
}

/**
 * Built-in toolboxes that work on a session's shared data (or park its steps): only an agent's run has one,
 * so the toolbox MCP server (`ratchet mcp`, `api.mcp_toolboxes`) does not serve them.
 */
export const sessionToolboxes: ReadonlySet<string> = new Set(['state', 'tasks', 'notes', 'waits']);

/**
 * `api.mcp_toolboxes.toolboxes` names toolboxes the API can serve: built-in ones (not a session's) and those
 * registered in code, checked here so that `ratchet config validate` reports what the API would refuse at
 * start. MCP servers' names are not among them: the toolbox server serves only tools it runs itself.
 */
function checkServedToolboxes(
  raw: Record<string, unknown>,
  known: readonly KnownToolbox[] | undefined,
  problems: ConfigProblem[],
) {
  if (known === undefined) return;
  const api = isRecord(raw.api) ? raw.api : {};
  const section = isRecord(api.mcp_toolboxes) ? api.mcp_toolboxes : {};
  const servable = known
    .map((toolbox) => (typeof toolbox === 'string' ? toolbox : toolbox.name))
    .filter((name) => !sessionToolboxes.has(name));
  entriesOf(section.toolboxes).forEach((name, index) => {
    if (typeof name !== 'string' || servable.includes(name)) return;
    const path = ['api', 'mcp_toolboxes', 'toolboxes', index];
    if (sessionToolboxes.has(name))
      problems.push({
        path,
        message:
          `"${name}" works on a session's shared data, which only an agent's run has: remove it ` +
          `(toolboxes that can be served: ${servable.join(', ')})`,
      });
    else
      problems.push({
        path,
        message:
          `unknown toolbox "${name}"${didYouMean(name, servable)}: name one that can be served ` +
          `(${servable.join(', ')}) or register a toolbox of that name in code (createToolBox)`,
      });
  });
}

/** A reflection saved to memory needs the agent's memory: the `memory` toolbox among its toolboxes. */
function checkReflectionMemory(agent: Record<string, unknown>, index: number, problems: ConfigProblem[]) {
  const hasMemory = entriesOf(agent.toolboxes).some(
    (reference) => (isRecord(reference) ? reference.name : reference) === 'memory',
  );
  entriesOf(agent.effects).forEach((effect, effectIndex) => {
    if (!isRecord(effect) || effect.kind !== 'reflection' || !isRecord(effect.params)) return;
    if (effect.params.save_to_memory !== true || hasMemory) return;
    problems.push({
      path: ['agents', index, 'effects', effectIndex, 'params', 'save_to_memory'],
      message:
        'a reflection is saved to the agent\'s memory, which it has only with the "memory" toolbox: add ' +
        '"memory" to the agent\'s toolboxes, or leave save_to_memory out',
    });
  });
}

/**
 * Checks what the schema cannot see entry by entry: unique provider and agent names, that agents'
 * providers and toolboxes and `entry_agent` name something that exists, and that no agent uses a disabled
 * `exec` toolbox. Works on the raw parsed YAML so it runs even when other parts fail the schema; whatever
 * does not have the expected shape is skipped (the schema reports it), and references are only checked
 * against a complete list of names.
 */
export function checkReferences(raw: unknown, options: ReferenceCheckOptions = {}): ConfigProblem[] {
  if (!isRecord(raw)) return [];
  const problems: ConfigProblem[] = [];
  const providerNames = collectNames(raw.providers, 'providers', 'provider', problems);
  const agentNames = collectNames(raw.agents, 'agents', 'agent', problems);
  const mcpServerNames = collectNames(raw.mcp_servers ?? [], 'mcp_servers', 'MCP server', problems);
  const knownToolboxes = toolboxNames(raw.mcp_servers, mcpServerNames, options.knownToolboxes, problems);

  entriesOf(raw.agents).forEach((agent, index) => {
    if (!isRecord(agent)) return;
    if (typeof agent.provider === 'string' && providerNames && !providerNames.includes(agent.provider)) {
      problems.push({
        path: ['agents', index, 'provider'],
        message: unknownReference('provider', agent.provider, providerNames),
      });
    }
    entriesOf(agent.toolboxes).forEach((reference, toolboxIndex) => {
      const name = isRecord(reference) ? reference.name : reference;
      if (name === 'exec' && !execEnabled(raw)) {
        problems.push({
          path: ['agents', index, 'toolboxes', toolboxIndex],
          message: 'toolbox "exec" is disabled: set tools.exec.enabled: true and list tools.exec.commands',
        });
      }
    });
    checkReflectionMemory(agent, index, problems);
    const known = knownToolboxes;
    if (known === undefined) return;
    entriesOf(agent.toolboxes).forEach((reference, toolboxIndex) => {
      const path = ['agents', index, 'toolboxes', toolboxIndex];
      const name = isRecord(reference) ? reference.name : reference;
      if (typeof name !== 'string') return;
      if (!known.has(name)) {
        const pathOfName = isRecord(reference) ? [...path, 'name'] : path;
        problems.push({ path: pathOfName, message: unknownReference('toolbox', name, [...known.keys()]) });
        return;
      }
      const tools = known.get(name);
      if (!isRecord(reference) || tools === undefined) return;
      entriesOf(reference.tools).forEach((tool, toolIndex) => {
        if (typeof tool === 'string' && !tools.includes(tool)) {
          problems.push({ path: [...path, 'tools', toolIndex], message: unknownTool(tool, name, tools) });
        }
      });
    });
  });

  checkServedToolboxes(raw, options.knownToolboxes, problems);
  const composites = checkComposites(raw, agentNames, problems);
  entriesOf(raw.teams).forEach((team, index) => {
    const coordinator = isRecord(team) ? team.coordinator : undefined;
    const provider = isRecord(coordinator) ? coordinator.provider : undefined;
    if (typeof provider === 'string' && providerNames && !providerNames.includes(provider))
      problems.push({
        path: ['teams', index, 'coordinator', 'provider'],
        message: unknownReference('provider', provider, providerNames),
      });
  });
  const runnable = agentNames && composites ? [...agentNames, ...composites] : undefined;
  checkContracts(raw, runnable, problems);
  if (typeof raw.entry_agent === 'string' && runnable && !runnable.includes(raw.entry_agent)) {
    problems.push({ path: ['entry_agent'], message: unknownReference('agent', raw.entry_agent, runnable) });
  }
  checkSchedules(raw, runnable, problems);
  entriesOf(raw.triggers).forEach((trigger, index) => {
    const agent = isRecord(trigger) ? trigger.agent : undefined;
    if (typeof agent === 'string' && runnable && !runnable.includes(agent))
      problems.push({
        path: ['triggers', index, 'agent'],
        message: unknownReference('agent', agent, runnable),
      });
  });
  const redis = isRecord(raw.redis) ? raw.redis : {};
  const shardCount = typeof redis.shards === 'number' ? redis.shards : 1;
  entriesOf(isRecord(raw.worker) ? raw.worker.shards : undefined).forEach((shard, index) => {
    if (typeof shard === 'number' && shard >= shardCount)
      problems.push({
        path: ['worker', 'shards', index],
        message: `shard ${shard} does not exist: redis.shards is ${shardCount}, so shards are 0 to ${shardCount - 1}`,
      });
  });
  return problems;
}

/**
 * Handoff groups and teams are run like agents: their names share the agents' namespace, and their members
 * name agents, groups or teams. A team or group may not contain itself (directly or through others).
 * Returns the names of the groups and teams, or undefined when a list is not complete.
 */
function checkComposites(
  raw: Record<string, unknown>,
  agentNames: string[] | undefined,
  problems: ConfigProblem[],
): string[] | undefined {
  const optionalNames = (key: 'handoffs' | 'teams', label: 'handoff group' | 'team') =>
    raw[key] === undefined || raw[key] === null ? [] : collectNames(raw[key], key, label, problems);
  const handoffNames = optionalNames('handoffs', 'handoff group');
  const teamNames = optionalNames('teams', 'team');
  if (!agentNames || !handoffNames || !teamNames) return undefined;
  const taken = new Map<string, string>(agentNames.map((name) => [name, 'an agent']));
  const lists = [
    ['handoffs', handoffNames, 'a handoff group'],
    ['teams', teamNames, 'a team'],
  ] as const;
  for (const [listKey, names, label] of lists) {
    names.forEach((name) => {
      const clash = taken.get(name);
      if (clash) {
        const index = entriesOf(raw[listKey]).findIndex((entry) => isRecord(entry) && entry.name === name);
        problems.push({
          path: [listKey, index, 'name'],
          message: `"${name}" is already the name of ${clash}`,
        });
      } else taken.set(name, label);
    });
  }
  const known = [...taken.keys()];
  const membersOf = new Map<string, string[]>();
  entriesOf(raw.handoffs).forEach((group, index) => {
    if (!isRecord(group)) return;
    const members = entriesOf(group.members).filter((member): member is string => typeof member === 'string');
    membersOf.set(String(group.name), members);
    members.forEach((member, memberIndex) => {
      if (!known.includes(member))
        problems.push({
          path: ['handoffs', index, 'members', memberIndex],
          message: unknownReference('agent', member, known),
        });
    });
  });
  entriesOf(raw.teams).forEach((team, index) => {
    if (!isRecord(team)) return;
    const members = entriesOf(team.members).map((member) => (isRecord(member) ? member.agent : undefined));
    membersOf.set(
      String(team.name),
      members.filter((member): member is string => typeof member === 'string'),
    );
    members.forEach((member, memberIndex) => {
      if (typeof member === 'string' && !known.includes(member))
        problems.push({
          path: ['teams', index, 'members', memberIndex, 'agent'],
          message: unknownReference('agent', member, known),
        });
    });
  });
  for (const [listKey, names] of lists) {
    names.forEach((name, index) => {
      if (containsItself(name, membersOf))
        problems.push({
          path: [listKey, index, 'members'],
          message: `"${name}" contains itself through its members: a team or group cannot be its own member`,
        });
    });
  }
  return [...handoffNames, ...teamNames];
}

function containsItself(name: string, membersOf: ReadonlyMap<string, string[]>): boolean {
  const seen = new Set<string>();
  const pending = [...(membersOf.get(name) ?? [])];
  while (pending.length > 0) {
    const next = pending.pop() as string;
    if (next === name) return true;
    if (seen.has(next)) continue;
    seen.add(next);
    pending.push(...(membersOf.get(next) ?? []));
  }
  return false;
}

/**
 * Every toolbox an agent may name: the built-in ones and one per MCP server. A server may not take a
 * built-in toolbox's name (agents could not tell them apart). Undefined when the list is not complete.
 */
function toolboxNames(
  mcpServers: unknown,
  mcpServerNames: readonly string[] | undefined,
  builtin: readonly KnownToolbox[] | undefined,
  problems: ConfigProblem[],
): Map<string, string[] | undefined> | undefined {
  if (builtin === undefined) return undefined;
  const known = new Map(
    builtin.map((toolbox) =>
      typeof toolbox === 'string'
        ? [toolbox, undefined]
        : [toolbox.name, toolbox.tools?.map((tool) => tool.name)],
    ),
  );
  entriesOf(mcpServers).forEach((server, index) => {
    if (isRecord(server) && typeof server.name === 'string' && known.has(server.name)) {
      problems.push({
        path: ['mcp_servers', index, 'name'],
        message: `"${server.name}" is the name of a built-in toolbox: give the MCP server another name`,
      });
    }
  });
  if (mcpServerNames === undefined) return undefined;
  // A server's tools are known only once it is connected.
  for (const name of mcpServerNames) if (!known.has(name)) known.set(name, undefined);
  return known;
}

/**
 * The names of a list's entries, reporting duplicates; undefined when some entry has no usable name, since
 * a reference to it would then be reported as unknown for the wrong reason.
 */
function collectNames(
  list: unknown,
  listKey: string,
  label: string,
  problems: ConfigProblem[],
): string[] | undefined {
  if (!Array.isArray(list)) return undefined;
  const firstIndex = new Map<string, number>();
  let complete = true;
  list.forEach((entry, index) => {
    const name = isRecord(entry) ? entry.name : undefined;
    if (typeof name !== 'string') {
      complete = false;
      return;
    }
    const earlier = firstIndex.get(name);
    if (earlier === undefined) firstIndex.set(name, index);
    else
      problems.push({
        path: [listKey, index, 'name'],
        message: `duplicate ${label} name "${name}" (also ${listKey}[${earlier}])`,
      });
  });
  return complete ? [...firstIndex.keys()] : undefined;
}

function unknownReference(
  label: 'provider' | 'toolbox' | 'agent' | 'handoff group' | 'team',
  name: string,
  known: readonly string[],
): string {
  const hint = didYouMean(name, known);
  if (hint !== '') return `unknown ${label} "${name}"${hint}`;
  const plural = label === 'toolbox' ? 'toolboxes' : `${label}s`;
  return `unknown ${label} "${name}" (known ${plural}: ${known.length > 0 ? known.join(', ') : 'none'})`;
}

/** Running commands is off unless the config turns it on: an agent listing `exec` otherwise is a mistake. */
function execEnabled(raw: Record<string, unknown>): boolean {
  const tools = raw.tools;
  if (!isRecord(tools) || !isRecord(tools.exec)) return false;
  return tools.exec.enabled === true;
}

function unknownTool(tool: string, toolbox: string, known: readonly string[]): string {
  const hint = didYouMean(tool, known);
  if (hint !== '') return `unknown tool "${tool}" in toolbox "${toolbox}"${hint}`;
  return `unknown tool "${tool}" in toolbox "${toolbox}" (its tools: ${known.join(', ') || 'none'})`;
}

function entriesOf(list: unknown): unknown[] {
  return Array.isArray(list) ? list : [];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Contracts name agents that exist, go from one agent to another, and no two cover the same hand-over. */
function checkContracts(
  raw: Record<string, unknown>,
  runnable: string[] | undefined,
  problems: ConfigProblem[],
) {
  const seen = new Map<string, number>();
  entriesOf(raw.contracts).forEach((contract, index) => {
    if (!isRecord(contract)) return;
    for (const key of ['from_agent', 'to_agent'] as const) {
      const name = contract[key];
      if (typeof name === 'string' && runnable && !runnable.includes(name))
        problems.push({
          path: ['contracts', index, key],
          message: unknownReference('agent', name, runnable),
        });
    }
    if (typeof contract.from_agent !== 'string') return;
    if (contract.to_agent === contract.from_agent) {
      // to_agent is the parent that delegated to from_agent, and no agent may delegate to itself.
      problems.push({
        path: ['contracts', index, 'to_agent'],
        message:
          `a contract from "${contract.from_agent}" to itself never applies (an agent cannot delegate to ` +
          'itself): name the agent that delegates to it, or leave to_agent out to check what it answers a session',
      });
      return;
    }
    const pair = `${contract.from_agent}->${typeof contract.to_agent === 'string' ? contract.to_agent : ''}`;
    const earlier = seen.get(pair);
    if (earlier !== undefined) {
      problems.push({
        path: ['contracts', index],
        message: `contracts[${earlier}] already covers what ${contract.from_agent} hands to ${typeof contract.to_agent === 'string' ? contract.to_agent : 'the session (no to_agent)'}: merge the two`,
      });
    } else seen.set(pair, index);
  });
}

/** Schedules have unique ids and start agents (or groups, or teams) that exist. */
function checkSchedules(
  raw: Record<string, unknown>,
  runnable: string[] | undefined,
  problems: ConfigProblem[],
) {
  const seen = new Map<string, number>();
  entriesOf(raw.schedules).forEach((schedule, index) => {
    if (!isRecord(schedule)) return;
    if (typeof schedule.agent === 'string' && runnable && !runnable.includes(schedule.agent))
      problems.push({
        path: ['schedules', index, 'agent'],
        message: unknownReference('agent', schedule.agent, runnable),
      });
    if (typeof schedule.id !== 'string') return;
    const earlier = seen.get(schedule.id);
    if (earlier === undefined) seen.set(schedule.id, index);
    else
      problems.push({
        path: ['schedules', index, 'id'],
        message: `duplicate schedule id "${schedule.id}" (also schedules[${earlier}])`,
      });
  });
}
