import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  type AgentConfig,
  configSecrets,
  envReferencesOf,
  type HandoffConfig,
  type RatchetConfig,
  type TeamConfig,
} from '../config/index.js';
import { defineRecordKind } from '../schemas/record-kinds.js';
import { canonicalJson } from './core/canonical-json.js';

/** Hex digits of a definition's hash (SHA-256 of its canonical JSON, cut): 128 bits. */
export const definitionHashLength = 32;
const hashPattern = new RegExp(`^[0-9a-f]{${definitionHashLength}}$`);
export const definitionHashSchema = z.string().regex(hashPattern);

/**
 * What a definition keeps of a provider: its kind, model and model parameters. Never its key, headers or
 * URL: each worker's config supplies those by the provider's name.
 */
export const providerDefinitionSchema = z.strictObject({
  kind: z.string(),
  model: z.string(),
  temperature: z.number().optional(),
  max_tokens: z.number().int().optional(),
  max_reply_chars: z.number().int().optional(),
  context_window: z.number().int().optional(),
});
export type ProviderDefinition = z.infer<typeof providerDefinitionSchema>;

/** A config entry as its config's parse left it (defaults filled), environment values named by reference. */
const entrySchema = z.record(z.string(), z.unknown());

/**
 * The resolved definition a run started under (decision 0030), stored once per hash at `def:<hash>`. Version 1.
 * `entry` is the agent's, handoff group's or team's config entry; `members` the agents a handoff group's
 * run works as and a team's members; `providers` each provider they name; `contracts` the handoff
 * contracts that bind them. A string that came from an environment variable holds `${NAME}` instead (and a
 * literal `$` is written `$$`), expanded by the worker that reads it.
 */
export const agentDefinitionSchema = z.strictObject({
  v: z.literal(1),
  kind: z.enum(['agent', 'handoff', 'team']),
  name: z.string(),
  entry: entrySchema,
  members: z.record(z.string(), entrySchema),
  providers: z.record(z.string(), providerDefinitionSchema),
  contracts: z.array(entrySchema),
});
export type AgentDefinition = z.infer<typeof agentDefinitionSchema>;

defineRecordKind({ name: 'definition', version: 1, schema: agentDefinitionSchema });

/**
 * `options.delegate` of an agent that does not set it: on when the config has more than one agent. Not part
 * of a definition (that would change every hash once): a run records it beside its definition, and the runs
 * below it inherit it (decision 0047).
 */
export function delegateDefaultOf(config: Pick<RatchetConfig, 'agents'>): boolean {
  return config.agents.length > 1;
}

/** A definition with its hash and the canonical JSON that was hashed (what is stored). */
export interface HashedDefinition {
  hash: string;
  definition: AgentDefinition;
  text: string;
}

/** The hash of a definition: SHA-256 of its canonical JSON (keys sorted), first 32 hex digits. */
export function hashDefinition(definition: AgentDefinition): HashedDefinition {
  const text = canonicalJson(definition) ?? JSON.stringify(definition);
  const hash = createHash('sha256').update(text).digest('hex').slice(0, definitionHashLength);
  return { hash, definition, text };
}

/**
 * The definition of every agent, handoff group and team of a config, by name. Built once per process; two
 * processes whose configs say the same of a name give it the same hash, whatever else differs.
 */
export function definitionsOf(config: RatchetConfig): Map<string, HashedDefinition> {
  const scrub = scrubber(config);
  const agents = new Map(config.agents.map((agent) => [agent.name, agent]));
  const providersOf = (names: readonly string[]) =>
    Object.fromEntries(
      [...new Set(names)].flatMap((name) => {
        const provider = config.providers.find((candidate) => candidate.name === name);
        return provider ? [[name, providerDefinitionOf(provider)]] : [];
      }),
    );
  const contractsOf = (names: readonly string[]) =>
    config.contracts
      .filter((contract) => names.includes(contract.from_agent))
      .map((contract) => scrub(contract) as Record<string, unknown>);
  const memberEntries = (names: readonly string[]) =>
    Object.fromEntries(
      names.flatMap((name) => {
        const agent = agents.get(name);
        return agent ? [[name, scrub(agent) as Record<string, unknown>]] : [];
      }),
    );
  const result = new Map<string, HashedDefinition>();
  const add = (definition: AgentDefinition) => result.set(definition.name, hashDefinition(definition));
  for (const agent of config.agents) {
    add({
      v: 1,
      kind: 'agent',
      name: agent.name,
      entry: scrub(agent) as Record<string, unknown>,
      members: {},
      providers: providersOf([agent.provider]),
      contracts: contractsOf([agent.name]),
    });
  }
  for (const group of config.handoffs) add(groupDefinition(group, 'handoff', group.members));
  for (const team of config.teams)
    add(
      groupDefinition(
        team,
        'team',
        team.members.map((m) => m.agent),
      ),
    );
  return result;

  function groupDefinition(
    entry: HandoffConfig | TeamConfig,
    kind: 'handoff' | 'team',
    members: readonly string[],
  ): AgentDefinition {
    const memberAgents = members.flatMap((name) => agents.get(name) ?? []);
    const coordinator = 'coordinator' in entry ? entry.coordinator : undefined;
    const coordinatorProvider =
      coordinator && 'provider' in coordinator && typeof coordinator.provider === 'string'
        ? [coordinator.provider]
        : [];
    return {
      v: 1,
      kind,
      name: entry.name,
      entry: scrub(entry) as Record<string, unknown>,
      members: memberEntries(members),
      providers: providersOf([...memberAgents.map((agent) => agent.provider), ...coordinatorProvider]),
      contracts: contractsOf([entry.name, ...members]),
    };
  }
}

/**
 * The definition of one member of a recorded team or handoff group, as `definitionsOf` gives an agent's: its
 * entry, its provider and the contracts that bind it, all from the group's record. A team's member run
 * records it, so the member acts as the team recorded it whatever the worker's config says now (the same
 * hash as the agent's own while the config is unchanged). Undefined when the group has no such member.
 */
export function memberDefinitionOf(group: AgentDefinition, name: string): HashedDefinition | undefined {
  const entry = group.members[name];
  if (!entry) return undefined;
  const provider = typeof entry.provider === 'string' ? entry.provider : undefined;
  const recorded = provider === undefined ? undefined : group.providers[provider];
  return hashDefinition({
    v: 1,
    kind: 'agent',
    name,
    entry,
    members: {},
    providers: provider !== undefined && recorded ? { [provider]: recorded } : {},
    contracts: group.contracts.filter((contract) => contract.from_agent === name),
  });
}

function providerDefinitionOf(provider: RatchetConfig['providers'][number]): ProviderDefinition {
  const number = (value: unknown) => (typeof value === 'number' ? value : undefined);
  const fields = {
    temperature: number(provider.temperature),
    max_tokens: number(provider.max_tokens),
    max_reply_chars: provider.max_reply_chars,
    context_window: number(provider.context_window),
  };
  return {
    kind: provider.kind,
    model: provider.model,
    ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)),
  };
}

/**
 * Makes a config value safe to record: every string with `$` written `$$`, each value that came from an
 * environment variable replaced by `${NAME}`, and any other secret the config holds replaced by
 * `[secret]` (a secret is never stored, not even inside a longer string).
 */
function scrubber(config: RatchetConfig): (value: unknown) => unknown {
  const references = [...envReferencesOf(config)].sort(([a], [b]) => b.length - a.length);
  const secrets = configSecrets(config, {}).filter(
    (secret) => secret.length >= 4 && !references.some(([value]) => value === secret),
  );
  const scrubString = (text: string): string => {
    let result = text.split('$').join('$$');
    for (const [value, name] of references)
      result = result.split(value.split('$').join('$$')).join(`\${${name}}`);
    for (const secret of secrets) result = result.split(secret.split('$').join('$$')).join('[secret]');
    return result;
  };
  const scrub = (value: unknown): unknown => {
    if (typeof value === 'string') return scrubString(value);
    if (Array.isArray(value)) return value.map(scrub);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value).flatMap(([key, item]) => (item === undefined ? [] : [[key, scrub(item)]])),
    );
  };
  return scrub;
}

/** `${NAME}` and `$$` of a recorded string, expanded with this process's environment. */
export function expandRecorded(value: unknown, env: NodeJS.ProcessEnv, path = 'definition'): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$(\$|\{([A-Za-z_][A-Za-z0-9_]*)\})/g, (_match, escaped: string, name?: string) => {
      if (escaped === '$') return '$';
      const found = name === undefined ? undefined : env[name];
      if (found === undefined) {
        throw new Error(
          `${path}: the recorded definition names environment variable ${name}, which is not set on this worker (set it)`,
        );
      }
      return found;
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => expandRecorded(item, env, `${path}[${index}]`));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, expandRecorded(item, env, `${path}.${key}`)]),
  );
}

/** The recorded agent entry of a definition, as its config's parse left it, with this worker's environment. */
export function agentEntryOf(definition: AgentDefinition, name: string, env: NodeJS.ProcessEnv): AgentConfig {
  const entry =
    definition.kind === 'agent' && definition.name === name ? definition.entry : definition.members[name];
  if (!entry) throw new Error(`definition of "${definition.name}" has no agent "${name}"`);
  return expandRecorded(entry, env, `agent "${name}"`) as AgentConfig;
}

/** The top-level fields whose values differ between two definitions (an agent_upgraded event names them). */
export function changedFields(from: AgentDefinition, to: AgentDefinition): string[] {
  const changed = new Set<string>();
  const entryKeys = new Set([...Object.keys(from.entry), ...Object.keys(to.entry)]);
  for (const key of entryKeys) {
    if (canonicalJson(from.entry[key]) !== canonicalJson(to.entry[key])) changed.add(key);
  }
  for (const key of ['kind', 'name', 'members', 'providers', 'contracts'] as const) {
    if (canonicalJson(from[key]) !== canonicalJson(to[key])) changed.add(key);
  }
  return [...changed].sort();
}
