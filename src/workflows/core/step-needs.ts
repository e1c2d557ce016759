import type { AgentConfig, HandoffConfig, TeamConfig } from '../../config/index.js';
import { type CapabilityKind, capabilityKinds, capabilityLimits } from '../../schemas/capabilities.js';

export { type CapabilityKind, capabilityKinds, capabilityLimits };

/**
 * What a step needs of the worker that runs it, and what a worker can serve (decision 0031). Both are sets of
 * names by kind: code a definition can name but a worker may lack (an old worker in a rolling deploy, or a
 * worker pool without some toolbox). Pure: the worker compares the two before it runs a step, and hands the
 * step back to the queue when it lacks something, instead of failing it or running it partly.
 */
/** What a worker advertises in its heartbeat record: every name it can serve, by kind. */
export type Capabilities = { readonly [Kind in CapabilityKind]: readonly string[] };

/** What a step needs: some names of some kinds. */
export type Needs = { readonly [Kind in CapabilityKind]?: readonly string[] };

/** How a missing name is written (`tool:crm_lookup`): the kind in the singular, a colon, the name. */
const singular = {
  agents: 'agent',
  providers: 'provider',
  toolboxes: 'toolbox',
  tools: 'tool',
  effects: 'effect',
  middleware: 'middleware',
  coordinators: 'coordinator',
  stop_conditions: 'stop_condition',
  mcp_servers: 'mcp_server',
  contract_rules: 'contract_rule',
} as const satisfies Record<CapabilityKind, string>;

const kindOfSingular = new Map<string, CapabilityKind>(
  capabilityKinds.map((kind) => [singular[kind], kind] as const),
);

/** The agent, handoff group or team a step's run works as: its resolved definition (config entry shape). */
export type NeedsDefinition = AgentConfig | HandoffConfig | TeamConfig;

function isTeam(definition: NeedsDefinition): definition is TeamConfig {
  return 'coordinator' in definition;
}

function isAgent(definition: NeedsDefinition): definition is AgentConfig {
  return 'provider' in definition;
}

/**
 * What a run of this definition needs of a worker: its provider, toolboxes and the tools it narrows them to,
 * effect and middleware kinds (built-in ones included: an older worker may lack a newer built-in), a team's
 * coordinator kind (and the provider of an `llm` one), a handoff group's members (they reply in its
 * iterations). MCP servers are
 * toolboxes by their server's name, so they are needed as toolboxes.
 */
export function needsOf(definition: NeedsDefinition): Needs {
  if (isTeam(definition)) {
    const { coordinator } = definition;
    const provider = (coordinator as { provider?: unknown }).provider;
    // Its members' turns are child runs, whose own steps are checked where they run.
    return {
      coordinators: [coordinator.kind],
      ...(typeof provider === 'string' ? { providers: [provider] } : {}),
    };
  }
  if (!isAgent(definition)) return { agents: unique(definition.members) };
  const toolboxes = definition.toolboxes.map((reference) =>
    typeof reference === 'string' ? reference : reference.name,
  );
  const tools = definition.toolboxes.flatMap((reference) =>
    typeof reference === 'string' ? [] : (reference.tools ?? []),
  );
  return {
    providers: [definition.provider],
    toolboxes: unique(toolboxes),
    tools: unique(tools),
    effects: unique((definition.effects ?? []).map((effect) => effect.kind)),
    middleware: unique(definition.middleware.map((entry) => entry.kind)),
  };
}

/**
 * What the handoff contracts a run is bound by need of a worker (decision 0049): the rule kinds written in
 * code they name (`{kind, field?, params?}` in `schema.rules`), since a worker without one cannot check the
 * run's answer. Contracts as the run's recorded definition keeps them (config entry shape).
 */
export function contractNeeds(contracts: readonly unknown[]): Needs {
  const kinds = contracts.flatMap((contract) => {
    const schema = isRecord(contract) ? contract.schema : undefined;
    const rules = isRecord(schema) && Array.isArray(schema.rules) ? schema.rules : [];
    return rules.flatMap((rule) => (isRecord(rule) && typeof rule.kind === 'string' ? [rule.kind] : []));
  });
  return kinds.length > 0 ? { contract_rules: unique(kinds) } : {};
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Needs of several definitions (a run's agent and the agents above it, whose toolboxes it inherits). */
export function mergeNeeds(...all: readonly Needs[]): Needs {
  const merged: { [Kind in CapabilityKind]?: string[] } = {};
  for (const needs of all) {
    for (const kind of capabilityKinds) {
      const names = needs[kind];
      if (names && names.length > 0) merged[kind] = unique([...(merged[kind] ?? []), ...names]);
    }
  }
  return merged;
}

/** The names a worker lacks of what a step needs (`tool:crm_lookup`), in kind order; [] when it has all. */
export function missingNeeds(needs: Needs, capabilities: Capabilities): string[] {
  return capabilityKinds.flatMap((kind) => {
    const have = capabilities[kind];
    return (needs[kind] ?? [])
      .filter((name) => !have.includes(name))
      .map((name) => `${singular[kind]}:${name}`);
  });
}

/** Whether a worker with these capabilities has every one of these missing names (as missingNeeds writes them). */
export function servesAll(capabilities: Capabilities, missing: readonly string[]): boolean {
  return missing.every((entry) => {
    const colon = entry.indexOf(':');
    const kind = kindOfSingular.get(entry.slice(0, colon));
    return kind !== undefined && capabilities[kind].includes(entry.slice(colon + 1));
  });
}

/**
 * Checks a worker's capabilities against capabilityLimits; returns the problems (empty when within them), each
 * naming the kind and the limit.
 */
export function capabilityProblems(capabilities: Capabilities): string[] {
  return capabilityKinds.flatMap((kind) => {
    const names = capabilities[kind];
    const problems: string[] = [];
    if (names.length > capabilityLimits.maxNamesPerKind) {
      problems.push(
        `this worker serves ${names.length} ${kind}, more than the ${capabilityLimits.maxNamesPerKind} its heartbeat record may list: split the config over worker pools`,
      );
    }
    const long = names.find((name) => name.length > capabilityLimits.maxNameChars);
    if (long !== undefined) {
      problems.push(
        `${kind}: the name "${long.slice(0, 40)}…" is longer than ${capabilityLimits.maxNameChars} characters`,
      );
    }
    return problems;
  });
}

/** Capabilities with every list sorted and without duplicates (one record shape for equal workers). */
export function normalizedCapabilities(capabilities: Capabilities): Capabilities {
  const result = {} as { [Kind in CapabilityKind]: string[] };
  for (const kind of capabilityKinds) result[kind] = unique(capabilities[kind]).sort();
  return result;
}

function unique(names: readonly string[]): string[] {
  return [...new Set(names)];
}
