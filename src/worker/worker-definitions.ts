import type { ContractConfig, TeamConfig } from '../config/index.js';
import { RatchetError } from '../errors/index.js';
import type { DefinitionStore } from '../redis/definition-store.js';
import {
  type AgentDefinition,
  type AgentRuntime,
  agentEntryOf,
  compileContracts,
  type DefinitionRuntimes,
  type DefinitionToRecord,
  expandRecorded,
  type HandoffGroup,
  type HashedDefinition,
  type PinnedDefinition,
  type TeamService,
} from '../workflows/index.js';
import type { Registry } from './build-agents.js';

/** Recorded definitions a worker keeps built (each a few agents' runtimes). */
const maxPinned = 128;

/**
 * A worker's definitions (decision 0030): its config's, by name, and the recorded ones its runs name, read
 * once per hash (a bounded cache, most recently used kept) and built with this worker's code by name.
 */
export class WorkerDefinitions implements DefinitionRuntimes {
  private readonly pinnedByHash = new Map<string, PinnedDefinition>();
  /** This worker's config's own definitions, by hash: never read from Redis (it built them at start). */
  private readonly currentByHash: ReadonlyMap<string, AgentDefinition>;

  constructor(
    private readonly options: {
      store: DefinitionStore;
      current: ReadonlyMap<string, HashedDefinition>;
      registry: Pick<Registry, 'buildAgent' | 'buildTeam'>;
      /** What a handoff group tells its members of another one (its description). */
      describe: (name: string) => string;
      env: NodeJS.ProcessEnv;
    },
  ) {
    this.currentByHash = new Map(
      [...options.current.values()].map((current) => [current.hash, current.definition]),
    );
  }

  current(name: string): HashedDefinition | undefined {
    return this.options.current.get(name);
  }

  isCurrent(hash: string): boolean {
    return this.currentByHash.has(hash);
  }

  async prepare(hash: string): Promise<void> {
    const held = this.pinnedByHash.get(hash);
    if (held) {
      this.pinnedByHash.delete(hash);
      this.pinnedByHash.set(hash, held);
      return;
    }
    const definition = this.currentByHash.get(hash) ?? (await this.options.store.read(hash));
    if (!definition) {
      throw new RatchetError(
        'record_invalid',
        `definition ${hash} is not recorded: the run names a definition its Redis does not hold`,
      );
    }
    this.pinnedByHash.set(hash, this.pin(definition, hash));
    if (this.pinnedByHash.size > maxPinned) {
      const oldest = this.pinnedByHash.keys().next().value;
      if (oldest !== undefined) this.pinnedByHash.delete(oldest);
    }
  }

  pinned(hash: string): PinnedDefinition | undefined {
    return this.pinnedByHash.get(hash);
  }

  record(definition: DefinitionToRecord): Promise<void> {
    return this.options.store.record(definition);
  }

  private pin(definition: AgentDefinition, hash: string): PinnedDefinition {
    const built = new Map<string, AgentRuntime>();
    const { registry, env } = this.options;
    const names = definition.kind === 'agent' ? [definition.name] : Object.keys(definition.members);
    let team: TeamService | undefined;
    return {
      definition,
      agent: (name) => {
        if (!names.includes(name)) return undefined;
        let runtime = built.get(name);
        if (!runtime) {
          const entry = agentEntryOf(definition, name, env);
          runtime = registry.buildAgent(
            entry,
            `definition ${hash} agent "${name}"`,
            definition.providers[entry.provider],
          );
          built.set(name, runtime);
        }
        return runtime;
      },
      handoff: definition.kind === 'handoff' ? this.handoffOf(definition) : undefined,
      team: () => {
        if (definition.kind !== 'team') return undefined;
        team ??= registry.buildTeam(
          expandRecorded(definition.entry, env, `team "${definition.name}"`) as TeamConfig,
          definition.providers,
        );
        return team;
      },
      // Recorded in their parsed form (templates expanded, params parsed): compiled as they are.
      contracts: compileContracts(
        definition.contracts.map(
          (contract, index) => expandRecorded(contract, env, `contracts[${index}]`) as ContractConfig,
        ),
      ),
    };
  }

  private handoffOf(definition: AgentDefinition): HandoffGroup {
    const { entry } = definition;
    const members = Array.isArray(entry.members) ? entry.members.map(String) : [];
    return {
      name: definition.name,
      members,
      maxHandoffs: typeof entry.max_handoffs === 'number' ? entry.max_handoffs : 10,
      prefix: typeof entry.prefix === 'string' ? entry.prefix : '🤝',
      describe: this.options.describe,
    };
  }
}
