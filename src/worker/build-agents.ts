import {
  type AgentConfig,
  ConfigError,
  isLlmCoordinator,
  type JsonSchemaSubset,
  type RatchetConfig,
  type TeamConfig,
  type ToolboxReference,
} from '../config/index.js';
import { iterationLimit } from '../engine/index.js';
import { RatchetError } from '../errors/index.js';
import type { AnyMiddleware, ConfiguredMiddleware, Extensions } from '../extensions/index.js';
import type { Logger } from '../log/index.js';
import type { Completer, ToolDefinition } from '../models/completer.js';
import {
  DEFAULT_MAX_REPLY_CHARS,
  providerKind,
  resolveContextWindow,
  withReplyLimit,
} from '../models/index.js';
import { instructionsWithSkills, selectAgentSkills, skillsToolbox } from '../skills/index.js';
import { builtinToolboxes, delegationToolbox, interactionToolbox } from '../tools/builtin/index.js';
import { createToolBox, findTool, type Tool, type ToolBox, toolDefinitions } from '../tools/index.js';
import {
  type AgentRuntime,
  builtinMiddleware,
  delegateDefaultOf,
  effectRegistry,
  type HandoffGroup,
  type OutputSchemaCheck,
  outputGuardrailMiddleware,
  outputSchemaMiddleware,
  type ProviderDefinition,
  resolveEffects,
  type SupervisorLimits,
  supervisorInstructions,
  supervisorToolbox,
  type TeamKinds,
  type TeamService,
  teamKinds,
} from '../workflows/index.js';

/** Everything a run can be started with: agents, handoff groups and teams, by name. */
export interface Registry {
  agents: Map<string, AgentRuntime>;
  handoffs: Map<string, HandoffGroup>;
  teams: Map<string, TeamService>;
  /** The built-in toolboxes it built: the worker closes them when it stops (the browser's Chromium). */
  builtinToolboxes: ToolBox[];
  /**
   * Builds an agent's runtime from an entry (a recorded definition's, decision 0030) with this worker's code:
   * its toolboxes, middleware and effects by name, its provider's credentials by name, the recorded model.
   */
  buildAgent(agent: AgentConfig, path: string, recorded?: ProviderDefinition): AgentRuntime;
  /**
   * Builds a team from an entry (a recorded definition's) with this worker's code: its coordinator kind by
   * name, an `llm` coordinator's provider credentials by name with the recorded model.
   */
  buildTeam(team: TeamConfig, recorded?: Readonly<Record<string, ProviderDefinition>>): TeamService;
}

/** Whether a recorded provider definition says what this worker's provider entry says. */
function sameProvider(provider: RatchetConfig['providers'][number], recorded: ProviderDefinition): boolean {
  return recordedProviderFields.every((key) => provider[key] === recorded[key]);
}

/** The fields of a provider entry its definition records; the others (key, URL, headers) are the worker's. */
const recordedProviderFields = [
  'kind',
  'model',
  'temperature',
  'max_tokens',
  'max_reply_chars',
  'context_window',
] as const satisfies readonly (keyof ProviderDefinition)[];

/** This worker's provider entry with a definition's recorded fields in place of its own. */
function withRecorded(
  provider: RatchetConfig['providers'][number],
  recorded: ProviderDefinition,
): RatchetConfig['providers'][number] {
  const settings: Record<string, unknown> = { ...provider };
  for (const key of recordedProviderFields) delete settings[key];
  return { ...settings, ...recorded } as RatchetConfig['providers'][number];
}

/**
 * Builds each provider once, the built-in toolboxes from the config's `tools` section, and each agent's
 * runtime: model, toolboxes in order (narrowed to the tools the agent lists), its skills (described ones
 * behind `load_skill`, the others in its instructions), the interaction tools last. `toolboxes` are those
 * registered from code. Throws ConfigError for skills that are malformed or unknown.
 */
export function buildAgents(
  config: RatchetConfig,
  configDir: string,
  toolboxes: readonly ToolBox[],
  logger: Logger,
): Map<string, AgentRuntime> {
  return buildRegistry(config, configDir, toolboxes, logger).agents;
}

/** The agents (see buildAgents), the handoff groups and the teams of a config. */
export function buildRegistry(
  config: RatchetConfig,
  configDir: string,
  toolboxes: readonly ToolBox[],
  logger: Logger,
  /** Kinds registered in code which the config names: effects, coordinators, stop conditions, middleware. */
  extensions: Extensions = {},
): Registry {
  const middleware = middlewareRegistry(extensions.middleware ?? []);
  const effects = effectRegistry(extensions.effects);
  const kinds = teamKinds(extensions.coordinators, extensions.stopConditions);
  const completers = new Map<string, Completer>();
  for (const provider of config.providers) {
    const kind = providerKind(provider.kind);
    if (!kind)
      throw new RatchetError('config_invalid', `providers: unknown provider kind "${provider.kind}"`);
    completers.set(
      provider.name,
      withReplyLimit(
        kind.create(provider, { configDir, logger: logger.child({ provider: provider.name }) }),
        provider.name,
        provider.max_reply_chars ?? DEFAULT_MAX_REPLY_CHARS,
      ),
    );
  }
  const toolboxByName = new Map<string, ToolBox>();
  const builtins = builtinToolboxes({ tools: config.tools, configDir });
  for (const toolbox of [...builtins, ...toolboxes]) {
    if (toolboxByName.has(toolbox.name)) {
      throw new RatchetError(
        'config_invalid',
        `two toolboxes are named "${toolbox.name}" (built-in names are taken)`,
      );
    }
    toolboxByName.set(toolbox.name, toolbox);
  }
  const providerByName = new Map(config.providers.map((provider) => [provider.name, provider]));
  const providerRuntime = (name: string, recorded?: ProviderDefinition) => {
    const provider = providerByName.get(name);
    if (!provider) throw new RatchetError('config_invalid', `agents: unknown provider "${name}"`);
    const settings = recorded ? withRecorded(provider, recorded) : provider;
    return {
      name,
      kind: settings.kind,
      model: settings.model,
      price: config.pricing[settings.model],
      rateLimit: provider.rate_limit,
      contextWindow: resolveContextWindow({
        provider: settings,
        defaultContextWindows: config.default_context_windows,
      }),
    };
  };
  const interaction = interactionToolbox();
  const skillsOf = selectAgentSkills(config, configDir);
  const delegation = delegationToolbox(
    [...config.agents, ...config.handoffs, ...config.teams].map((entry) => ({
      name: entry.name,
      description: entry.description,
    })),
  );
  const agents = new Map<string, AgentRuntime>();
  const completerOf = (name: string) => {
    const completer = completers.get(name);
    if (!completer) throw new RatchetError('config_invalid', `unknown provider "${name}"`);
    return completer;
  };
  // A recorded definition's model and parameters, on this worker's provider of that name (its key, URL,
  // headers): one completer per distinct setting, kept for the process.
  const recordedCompleters = new Map<string, Completer>();
  const completerFor = (name: string, recorded: ProviderDefinition | undefined) => {
    const provider = providerByName.get(name);
    if (!recorded || !provider || sameProvider(provider, recorded)) return completerOf(name);
    if (recorded.kind !== provider.kind) {
      throw new RatchetError(
        'config_invalid',
        `provider "${name}" is of kind "${provider.kind}" on this worker, "${recorded.kind}" in the run's definition`,
      );
    }
    const key = `${name}\u0000${JSON.stringify(recorded)}`;
    let completer = recordedCompleters.get(key);
    if (!completer) {
      const kind = providerKind(provider.kind);
      if (!kind)
        throw new RatchetError('config_invalid', `providers: unknown provider kind "${provider.kind}"`);
      const settings = withRecorded(provider, recorded);
      completer = withReplyLimit(
        kind.create(settings, { configDir, logger: logger.child({ provider: name }) }),
        name,
        settings.max_reply_chars ?? DEFAULT_MAX_REPLY_CHARS,
      );
      recordedCompleters.set(key, completer);
    }
    return completer;
  };
  const routes = new Map(
    config.providers.map((provider) => [
      provider.name,
      { completer: completerOf(provider.name), provider: providerRuntime(provider.name) },
    ]),
  );
  const buildAgent = (agent: AgentConfig, path: string, recorded?: ProviderDefinition): AgentRuntime => {
    const completer = completerFor(agent.provider, recorded);
    const agentMiddleware = [
      ...answerChecksOf(agent.options),
      ...agent.middleware.map((entry, index) => ({
        definition: middlewareNamed(middleware, entry.kind, `${path}.middleware[${index}]`),
        options: entry.options,
      })),
    ];
    const agentToolboxes = agent.toolboxes.map((reference, toolboxIndex) =>
      resolveToolbox(reference, toolboxByName, `${path}.toolboxes[${toolboxIndex}]`),
    );
    const skills = skillsOf.get(agent.name) ?? [];
    const skillTools = skillsToolbox(skills);
    if (skillTools) agentToolboxes.push(skillTools);
    agentToolboxes.push(interaction);
    const supervisor = supervisorLimitsOf(agent.options.supervisor);
    if (supervisor) agentToolboxes.push(supervisorToolbox(supervisor));
    // A supervisor delegates: its sub-goals are given to other agents.
    // Left to the default, the run's recorded default decides (runAgent, decision 0047): the toolbox is kept
    // at hand for it.
    const delegates = agent.options.delegate ?? delegateDefaultOf(config);
    if (supervisor || delegates) agentToolboxes.push(delegation);
    let fixedTools: ToolDefinition[] | undefined;
    const provider = providerRuntime(agent.provider, recorded);
    return {
      name: agent.name,
      description: agent.description,
      prefix: agent.prefix,
      instructions: withOutputSchema(
        withSupervisorInstructions(instructionsWithSkills(agent.instructions, skills), supervisor),
        agent.options.output_schema,
      ),
      maxIterations: iterationLimit(agent.options.max_iterations),
      stream: agent.options.stream,
      budget: agent.budget,
      timeoutS: agent.options.timeout_s,
      outputSchema: agent.options.output_schema,
      outputSchemaVersion: agent.options.output_schema ? agent.options.output_schema_version : undefined,
      maxDelegationDepth: agent.options.max_delegation_depth,
      supervisor,
      effects: resolveEffects({
        configured: agent.effects,
        contextWindow: provider.contextWindow,
        contextThreshold: agent.options.context_threshold,
        registry: effects,
      }),
      completer,
      toolboxes: agentToolboxes,
      ...(supervisor || agent.options.delegate !== undefined ? {} : { defaultDelegation: delegation }),
      // A getter: an MCP server's toolbox changes when the server reconnects or its tool list changes.
      // Without such a toolbox the list is fixed: built once.
      get tools() {
        if (agentToolboxes.some((toolbox) => toolbox.dynamic)) return toolDefinitions(agentToolboxes);
        fixedTools ??= toolDefinitions(agentToolboxes);
        return fixedTools;
      },
      provider,
      approvalTools: new Set(
        Object.entries(agent.tools)
          .filter(([, settings]) => settings.requires_approval)
          .map(([name]) => name),
      ),
      ...(agentMiddleware.length > 0 ? { middleware: agentMiddleware, providerRoutes: routes } : {}),
    };
  };
  config.agents.forEach((agent, agentIndex) => {
    agents.set(agent.name, buildAgent(agent, `agents[${agentIndex}]`));
  });
  const descriptionOf = (name: string) =>
    [...config.agents, ...config.handoffs, ...config.teams].find((entry) => entry.name === name)
      ?.description ?? '';
  const handoffs = new Map<string, HandoffGroup>(
    config.handoffs.map((group) => [
      group.name,
      {
        name: group.name,
        members: group.members,
        maxHandoffs: group.max_handoffs,
        prefix: group.prefix,
        describe: descriptionOf,
      },
    ]),
  );
  const buildTeam = (team: TeamConfig, recorded?: Readonly<Record<string, ProviderDefinition>>) => {
    const { coordinator } = team;
    const coordinatorAgent = isLlmCoordinator(coordinator)
      ? {
          name: `${team.name}-coordinator`,
          description: `chooses who acts next in team ${team.name}`,
          prefix: team.prefix,
          instructions: coordinator.instructions,
          maxIterations: 1,
          stream: false,
          budget: undefined,
          timeoutS: undefined,
          outputSchema: undefined,
          maxDelegationDepth: undefined,
          supervisor: undefined,
          effects: [],
          completer: completerFor(coordinator.provider, recorded?.[coordinator.provider]),
          toolboxes: [],
          tools: [],
          provider: providerRuntime(coordinator.provider, recorded?.[coordinator.provider]),
          approvalTools: new Set<string>(),
        }
      : undefined;
    const service: TeamService = {
      name: team.name,
      description: team.description,
      prefix: team.prefix,
      members: team.members,
      coordinator,
      coordinatorAgent,
      timeoutS: team.options.timeout_s,
      coordinatorDefinition: coordinatorNamed(kinds, coordinator.kind, team.name),
      stopConditions: kinds.stopConditions,
    };
    return service;
  };
  const teams = new Map<string, TeamService>(config.teams.map((team) => [team.name, buildTeam(team)]));
  return { agents, handoffs, teams, builtinToolboxes: builtins, buildAgent, buildTeam };
}

/** The registered middleware a config entry names (the config check found it, unless given other extensions). */
function middlewareNamed(middleware: readonly AnyMiddleware[], kind: string, path: string): AnyMiddleware {
  const definition = middleware.find((candidate) => candidate.name === kind);
  if (!definition) {
    throw new RatchetError(
      'config_invalid',
      `${path}: middleware "${kind}" is not registered in this worker (give it in extensions.middleware)`,
    );
  }
  return definition;
}

/** The definition of a team's coordinator kind (the config check found it, unless given other extensions). */
function coordinatorNamed(
  kinds: TeamKinds,
  kind: string,
  team: string,
): TeamService['coordinatorDefinition'] {
  const definition = kinds.coordinators.get(kind);
  if (!definition) {
    throw new RatchetError(
      'config_invalid',
      `team "${team}": the coordinator kind "${kind}" is not registered on this worker (give its definition in extensions.coordinators)`,
    );
  }
  return definition;
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
  if (toolbox.dynamic) {
    // An MCP server's tools are known once it is reached (it may be down at start): narrow what it lists
    // whenever it is read; a listed name the server does not have is simply not offered.
    return {
      name,
      dynamic: true,
      get tools() {
        return toolbox.tools.filter((tool) => listed.includes(tool.name));
      },
    };
  }
  // The loader checks tool names when it knows the toolbox's tools; this covers toolboxes it did not.
  const unknown = listed.flatMap((tool, index) =>
    toolbox.tools.some((candidate) => candidate.name === tool)
      ? []
      : [`${path}.tools[${index}]: unknown tool "${tool}" in toolbox "${name}"`],
  );
  if (unknown.length > 0) throw new ConfigError('agents', unknown);
  const narrowed = createToolBox(
    name,
    toolbox.tools.filter((tool) => listed.includes(tool.name)),
  );
  // A narrowed toolbox keeps what it gives the instructions at a run's start (project context, memory).
  return toolbox.runContext ? { ...narrowed, runContext: toolbox.runContext } : narrowed;
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

function supervisorLimitsOf(config: AgentConfig['options']['supervisor']): SupervisorLimits | undefined {
  return config
    ? { maxSubGoals: config.max_sub_goals, maxOrchestrationSteps: config.max_orchestration_steps }
    : undefined;
}

function withSupervisorInstructions(instructions: string, limits: SupervisorLimits | undefined): string {
  if (!limits) return instructions;
  return instructions.trim() === ''
    ? supervisorInstructions(limits)
    : `${instructions}\n\n${supervisorInstructions(limits)}`;
}

/**
 * The checks of an agent's final answers, as middleware outermost on its chain (they check the answer as the
 * agent's other middleware left it): its output_schema (a mismatch goes back with the errors,
 * output_schema_retries times), then its output guardrail.
 */
function answerChecksOf(options: AgentConfig['options']): ConfiguredMiddleware[] {
  const checks: ConfiguredMiddleware[] = [];
  if (options.output_guardrail) {
    checks.push({ definition: outputGuardrailMiddleware, options: options.output_guardrail });
  }
  if (options.output_schema) {
    const check: OutputSchemaCheck = {
      json_schema: options.output_schema,
      max_retries: options.output_schema_retries ?? 2,
    };
    checks.push({ definition: outputSchemaMiddleware, options: check });
  }
  return checks;
}

/** The middleware a worker runs: the built-ins and those registered in code (a name taken twice is an error). */
function middlewareRegistry(registered: readonly AnyMiddleware[]): readonly AnyMiddleware[] {
  const all = [...builtinMiddleware];
  for (const definition of registered) {
    if (all.some((known) => known.name === definition.name)) {
      const builtin = builtinMiddleware.some((known) => known.name === definition.name);
      throw new RatchetError(
        'config_invalid',
        `extensions.middleware: the middleware "${definition.name}" is registered twice${
          builtin ? ' (it is a built-in kind)' : ''
        }`,
      );
    }
    all.push(definition);
  }
  return all;
}

/** The output schema, said in the instructions too (for providers without structured output). */
function withOutputSchema(instructions: string, schema: JsonSchemaSubset | undefined): string {
  if (!schema) return instructions;
  const rule =
    'When you give your final answer (a reply with no tool call), it must be one JSON object, and nothing ' +
    `else, that matches this JSON Schema: ${JSON.stringify(schema)}`;
  return instructions.trim() === '' ? rule : `${instructions}\n\n${rule}`;
}
