import { parseArgs } from 'node:util';
import type { RunListStatus } from '../client/index.js';
import { suggest } from '../config/suggest.js';
import { type OnBusy, onBusyPolicies } from '../schemas/index.js';
import type { Invocation } from './invocation.js';
import { listedStatuses, optionHelp, optionLines } from './option-help.js';

/** How a command reaches an API it did not start: `--url` (else $RATCHET_URL), `--token` (else $RATCHET_TOKEN). */
export interface ApiTarget {
  url: string | undefined;
  token: string | undefined;
}

export type CommandName =
  | 'dev'
  | 'api'
  | 'worker'
  | 'mcp'
  | 'run'
  | 'runs'
  | 'schedules'
  | 'status'
  | 'attach'
  | 'cancel'
  | 'answer'
  | 'events'
  | 'signal'
  | 'config'
  | 'contract'
  | 'init';

/** A parsed `ratchet` command line. */
export type Command =
  /** `command`: help on that command only (`ratchet status --help`). */
  | { name: 'help'; command?: CommandName }
  | { name: 'dev'; config: string | undefined; port: number | undefined }
  | { name: 'api'; config: string | undefined; port: number | undefined }
  | { name: 'worker'; config: string | undefined; concurrency: number | undefined }
  | {
      name: 'mcp';
      config: string | undefined;
      /** `--toolboxes`: serve these toolboxes' tools rather than the run operations. */
      toolboxes?: string[] | undefined;
      /** `--require-approval`: tools (of those toolboxes) a person approves before each call. */
      requireApproval?: string[] | undefined;
    }
  | {
      name: 'run';
      task: string;
      agent: string | undefined;
      url: string | undefined;
      token: string | undefined;
      config: string | undefined;
      /** Fewer iterations or seconds than the agent's config allows, for this run. */
      maxIterations: number | undefined;
      timeoutS: number | undefined;
      /** Send the task to this session (a message to it) rather than to a new one. */
      session?: string | undefined;
      /** With --session, what the message does while the session's run is active (decision 0032). */
      onBusy?: OnBusy | undefined;
    }
  | ({
      name: 'runs';
      /** Only runs with one of these statuses (none: every status). */
      statuses: RunListStatus[];
      agent: string | undefined;
      session: string | undefined;
      /** How many runs to show (with `all`: how many a page fetches). */
      limit: number | undefined;
      /** Page on to the last run. */
      all: boolean;
    } & ApiTarget)
  | ({ name: 'schedules' } & ApiTarget)
  | ({ name: 'status'; runId: string } & ApiTarget)
  | ({ name: 'attach'; runId: string } & ApiTarget)
  | ({ name: 'cancel'; runId: string; reason: string | undefined } & ApiTarget)
  /** `id`: a question id, a run id or a session id (its one pending question). */
  | ({ name: 'answer'; id: string; text: string } & ApiTarget)
  /** `payload`: --payload parsed as JSON (absent: none). */
  | ({ name: 'events-send'; event: string; payload: unknown; id: string | undefined } & ApiTarget)
  | ({ name: 'signal'; runId: string; event: string; payload: unknown; id: string | undefined } & ApiTarget)
  | { name: 'config-validate'; file: string }
  | { name: 'contract-check'; contract: string; file: string; config: string | undefined }
  | { name: 'init'; dir: string | undefined };

/** The command line is wrong: the CLI prints the message and the usage text, and exits 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The command whose usage fits the mistake; none: the whole usage text. */
    readonly command?: CommandName,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** The option may be given more than once (its values come as a list). */
  multiple?: boolean;
}
type OptionTable = Record<string, OptionSpec>;
type ValueOf<Spec extends OptionSpec> = Spec extends { type: 'boolean' }
  ? boolean
  : Spec extends { multiple: true }
    ? string[]
    : string;
type Values<Options extends OptionTable> = { [Name in keyof Options]?: ValueOf<Options[Name]> };

interface CommandSpec<Options extends OptionTable> {
  /** The command line as the usage shows it, every option it accepts included, and what it does. */
  synopsis: string;
  summary: string;
  options: Options;
  /** How many positional arguments it takes at most. */
  maxPositionals: number;
  /** `invocation`: how the user runs the CLI, for the examples usage errors give. */
  build(values: Values<Options>, positionals: string[], invocation: Invocation): Command;
}

function defineCommand<Options extends OptionTable>(spec: CommandSpec<Options>): CommandSpec<OptionTable> {
  return spec as unknown as CommandSpec<OptionTable>;
}

const configOption = { config: { type: 'string', short: 'c' } } as const;
const portOption = { port: { type: 'string' } } as const;
const apiOptions = { url: { type: 'string' }, token: { type: 'string' } } as const;
const externalEventOptions = { payload: { type: 'string' }, id: { type: 'string' }, ...apiOptions } as const;

const commands: Record<CommandName, CommandSpec<OptionTable>> = {
  dev: defineCommand({
    synopsis: 'dev [--config F] [--port N]',
    summary: 'API and worker in one process (starts redis-server if needed)',
    options: { ...configOption, ...portOption },
    maxPositionals: 0,
    build: (values) => ({
      name: 'dev',
      config: values.config,
      port: optionalInteger('--port', values.port, 0, 65_535),
    }),
  }),
  api: defineCommand({
    synopsis: 'api [--config F] [--port N]',
    summary: 'the HTTP API',
    options: { ...configOption, ...portOption },
    maxPositionals: 0,
    build: (values) => ({
      name: 'api',
      config: values.config,
      port: optionalInteger('--port', values.port, 0, 65_535),
    }),
  }),
  worker: defineCommand({
    synopsis: 'worker [--config F] [--concurrency N]',
    summary: 'a worker; run as many as you like',
    options: { ...configOption, concurrency: { type: 'string' } },
    maxPositionals: 0,
    build: (values) => ({
      name: 'worker',
      config: values.config,
      concurrency: optionalInteger('--concurrency', values.concurrency, 1),
    }),
  }),
  mcp: defineCommand({
    synopsis: 'mcp [--config F] [--toolboxes NAMES [--require-approval TOOLS]]',
    summary:
      "an MCP server on stdio (the API's /mcp serves it over HTTP); with --toolboxes, one serving the tools " +
      'of those toolboxes (comma-separated)',
    options: { ...configOption, toolboxes: { type: 'string' }, 'require-approval': { type: 'string' } },
    maxPositionals: 0,
    build: (values) => {
      const toolboxes = nameList('--toolboxes', values.toolboxes);
      const requireApproval = nameList('--require-approval', values['require-approval']);
      if (requireApproval !== undefined && toolboxes === undefined) {
        throw new UsageError('mcp: --require-approval goes with --toolboxes (e.g. --toolboxes exec)', 'mcp');
      }
      return { name: 'mcp', config: values.config, toolboxes, requireApproval };
    },
  }),
  run: defineCommand({
    synopsis:
      'run "<task>" [--agent A] [--max-iterations N] [--timeout S] [--session ID [--on-busy P]] ' +
      '[--config F | --url URL [--token T]]',
    summary: 'submit a task, stream its events, answer its questions',
    options: {
      ...configOption,
      agent: { type: 'string' },
      ...apiOptions,
      'max-iterations': { type: 'string' },
      timeout: { type: 'string' },
      session: { type: 'string' },
      'on-busy': { type: 'string' },
    },
    maxPositionals: Number.POSITIVE_INFINITY,
    build: (values, positionals, invocation) => {
      const task = positionals.join(' ').trim();
      if (task === '') {
        throw new UsageError(`run: give the task, e.g. ${invocation} run "What is 2 + 2?"`, 'run');
      }
      const url = optionalUrl(values.url);
      if (url !== undefined && values.config !== undefined) {
        throw new UsageError('run: --config applies only without --url (the API has its own config)', 'run');
      }
      if (url === undefined && values.token !== undefined) {
        throw new UsageError('run: --token applies only with --url', 'run');
      }
      return {
        name: 'run',
        task,
        agent: values.agent,
        url,
        token: values.token,
        config: values.config,
        maxIterations: optionalInteger('--max-iterations', values['max-iterations'], 1),
        timeoutS: optionalInteger('--timeout', values.timeout, 1),
        session: values.session,
        onBusy: onBusyOf(values['on-busy'], values.session),
      };
    },
  }),
  runs: defineCommand({
    synopsis: 'runs [--status S] [--agent A] [--session ID] [--limit N] [--all] [--url URL] [--token T]',
    summary: "the API's runs, newest first, with status, iterations and tokens",
    options: {
      status: { type: 'string', multiple: true },
      agent: { type: 'string' },
      session: { type: 'string' },
      limit: { type: 'string' },
      all: { type: 'boolean' },
      ...apiOptions,
    },
    maxPositionals: 0,
    build: (values) => ({
      name: 'runs',
      statuses: runStatuses(values.status ?? []),
      agent: values.agent,
      session: values.session,
      limit: optionalInteger('--limit', values.limit, 1, 500),
      all: values.all ?? false,
      ...apiTarget(values),
    }),
  }),
  schedules: defineCommand({
    synopsis: 'schedules [--url URL] [--token T]',
    summary: "the API's schedules, with their next fire and latest run",
    options: apiOptions,
    maxPositionals: 0,
    build: (values) => ({ name: 'schedules', ...apiTarget(values) }),
  }),
  status: defineCommand({
    synopsis: 'status RUN_ID [--url URL] [--token T]',
    summary: "a run's status, tokens, progress, question, answer or error",
    options: apiOptions,
    maxPositionals: 1,
    build: (values, positionals, invocation) => ({
      name: 'status',
      runId: requiredPositional('status', positionals, `the run id, e.g. ${invocation} status run_…`),
      ...apiTarget(values),
    }),
  }),
  attach: defineCommand({
    synopsis: 'attach RUN_ID [--url URL] [--token T]',
    summary: 'follow a run that is going and answer its questions, as run does',
    options: apiOptions,
    maxPositionals: 1,
    build: (values, positionals, invocation) => ({
      name: 'attach',
      runId: requiredPositional('attach', positionals, `the run id, e.g. ${invocation} attach run_…`),
      ...apiTarget(values),
    }),
  }),
  cancel: defineCommand({
    synopsis: 'cancel RUN_ID [--reason TEXT] [--url URL] [--token T]',
    summary: 'cancel a run (it stops at its next step)',
    options: { reason: { type: 'string' }, ...apiOptions },
    maxPositionals: 1,
    build: (values, positionals, invocation) => ({
      name: 'cancel',
      runId: requiredPositional('cancel', positionals, `the run id, e.g. ${invocation} cancel run_…`),
      reason: values.reason,
      ...apiTarget(values),
    }),
  }),
  answer: defineCommand({
    synopsis: 'answer ID "<answer>" [--url URL] [--token T]',
    summary: 'answer a waiting question (ID: the question, its run or session)',
    options: apiOptions,
    maxPositionals: 2,
    build: (values, positionals, invocation) => {
      const [id, text] = positionals;
      if (id === undefined || text === undefined) {
        throw new UsageError(
          `answer: give the id and the answer, e.g. ${invocation} answer run_… "blue"`,
          'answer',
        );
      }
      return { name: 'answer', id, text, ...apiTarget(values) };
    },
  }),
  events: defineCommand({
    synopsis: 'events send NAME [--payload JSON] [--id ID] [--url URL] [--token T]',
    summary: 'send an event to the runs waiting for NAME and its triggers (operator token)',
    options: externalEventOptions,
    maxPositionals: 2,
    build: (values, positionals, invocation) => {
      const [action, event] = positionals;
      if (action !== 'send') {
        throw new UsageError(
          action === undefined
            ? `events: say what to do, e.g. ${invocation} events send payment.settled --payload '{"order":"A1"}'`
            : `events: unknown action "${action}"${didYouMean(action, ['send'])}`,
          'events',
        );
      }
      if (event === undefined || event.trim() === '') {
        throw new UsageError(
          `events send: give the event's name, e.g. ${invocation} events send build.done`,
          'events',
        );
      }
      return { name: 'events-send', event: event.trim(), ...externalEvent(values) };
    },
  }),
  signal: defineCommand({
    synopsis: 'signal RUN_ID NAME [--payload JSON] [--id ID] [--url URL] [--token T]',
    summary: 'send a signal to one run (its wait_for_event for NAME receives it)',
    options: externalEventOptions,
    maxPositionals: 2,
    build: (values, positionals, invocation) => {
      const [runId, event] = positionals;
      if (runId === undefined || event === undefined || event.trim() === '') {
        throw new UsageError(
          `signal: give the run id and the event's name, e.g. ${invocation} signal run_… approved --payload '{"by":"ann"}'`,
          'signal',
        );
      }
      return { name: 'signal', runId: runId.trim(), event: event.trim(), ...externalEvent(values) };
    },
  }),
  config: defineCommand({
    synopsis: 'config validate F',
    summary: 'check a config file: each problem with its path, or a summary',
    options: {},
    maxPositionals: Number.POSITIVE_INFINITY,
    build: (_values, positionals) => {
      const [action, file, ...extra] = positionals;
      if (action !== 'validate') {
        throw new UsageError(
          action === undefined
            ? 'config: say what to do: config validate F'
            : `config: unknown action "${action}"${didYouMean(action, ['validate'])}`,
          'config',
        );
      }
      if (file === undefined) throw new UsageError('config validate: give the config file', 'config');
      if (extra.length > 0) {
        throw new UsageError(`config validate: unexpected argument "${extra.join(' ')}"`, 'config');
      }
      return { name: 'config-validate', file };
    },
  }),
  contract: defineCommand({
    synopsis: 'contract check NAME FILE [--config F]',
    summary: "check a JSON file against a config's contract (exit 0 valid, 1 not), for CI",
    options: configOption,
    maxPositionals: Number.POSITIVE_INFINITY,
    build: (values, positionals, invocation) => {
      const [action, contract, file, ...extra] = positionals;
      if (action !== 'check') {
        throw new UsageError(
          action === undefined
            ? `contract: say what to do, e.g. ${invocation} contract check review verdict.json`
            : `contract: unknown action "${action}"${didYouMean(action, ['check'])}`,
          'contract',
        );
      }
      if (contract === undefined || file === undefined) {
        throw new UsageError(
          `contract check: give the contract's name and the file, e.g. ${invocation} contract check review verdict.json`,
          'contract',
        );
      }
      if (extra.length > 0) {
        throw new UsageError(`contract check: unexpected argument "${extra.join(' ')}"`, 'contract');
      }
      return { name: 'contract-check', contract, file, config: values.config };
    },
  }),
  init: defineCommand({
    synopsis: 'init [DIR]',
    summary: 'write a starter dev team (config, skills, context, README) into DIR',
    options: {},
    maxPositionals: 1,
    build: (_values, positionals) => ({ name: 'init', dir: positionals[0] }),
  }),
};

const commandNames = Object.keys(commands) as CommandName[];

function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(commands, name);
}

/** Where a command's summary starts in the list of commands (a longer synopsis puts it on the next line). */
const summaryColumn = 41;

/** The whole usage text: every command, every option. */
export function usageText(invocation: Invocation = 'ratchet'): string {
  const commandLines = commandNames.map((name) => {
    const { synopsis, summary } = commands[name];
    const head = `  ${synopsis}`;
    return head.length < summaryColumn - 1
      ? `${head.padEnd(summaryColumn)}${summary}`
      : `${head}\n${' '.repeat(summaryColumn)}${summary}`;
  });
  return `Usage: ${invocation} <command> [options]

Commands:
${commandLines.join('\n')}

Options:
${Object.values(optionHelp)
  .map((option) => optionLines(option.flag, option.about))
  .join('\n')}
${optionLines('-h, --help', `this text (${invocation} <command> --help: that command's)`)}

Environment: REDIS_URL, RATCHET_CONFIG, RATCHET_URL, RATCHET_TOKEN, RATCHET_LOG_LEVEL, RATCHET_LOG_FORMAT,
RATCHET_SOURCE.
run and attach exit 0 when the run completed, 1 when it failed or was cancelled, 130 on Ctrl-C.
Usage errors exit 2.`;
}

/** One command's usage: its line and what its options mean for it. */
export function commandUsage(name: CommandName, invocation: Invocation = 'ratchet'): string {
  const spec = commands[name];
  const options = Object.keys(spec.options).flatMap((option) => {
    const help = optionHelp[option];
    return help === undefined ? [] : [optionLines(help.flag, help.per?.[name] ?? help.about)];
  });
  return [
    `Usage: ${invocation} ${spec.synopsis}`,
    '',
    `${spec.summary}.`,
    ...(options.length > 0 ? ['', 'Options:', ...options] : []),
    '',
    `${invocation} --help lists every command.`,
  ].join('\n');
}

/**
 * Parses `ratchet`'s arguments (without node and the script). Throws UsageError, whose examples start with
 * `invocation`.
 */
export function parseCommandLine(argv: readonly string[], invocation: Invocation = 'ratchet'): Command {
  const [name, ...rest] = argv;
  if (name === undefined) throw new UsageError('no command given');
  if (name === '-h' || name === '--help' || name === 'help') {
    const [topic] = rest;
    return topic !== undefined && isCommandName(topic) ? { name: 'help', command: topic } : { name: 'help' };
  }
  if (!isCommandName(name)) {
    throw new UsageError(
      name.startsWith('-')
        ? `give the command before its options (got "${name}")`
        : `unknown command "${name}"${didYouMean(name, commandNames)}`,
    );
  }
  const spec = commands[name];
  const helpAt = rest.findIndex((arg) => arg === '-h' || arg === '--help' || arg === '--');
  if (helpAt !== -1 && rest[helpAt] !== '--') return { name: 'help', command: name };
  const { values, positionals } = parse(name, rest, spec);
  try {
    return spec.build(values, positionals, invocation);
  } catch (error) {
    if (error instanceof UsageError && error.command === undefined) throw new UsageError(error.message, name);
    throw error;
  }
}

function parse(
  name: CommandName,
  args: readonly string[],
  spec: CommandSpec<OptionTable>,
): { values: Values<OptionTable>; positionals: string[] } {
  let parsed: { values: Values<OptionTable>; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...args], options: spec.options, allowPositionals: true, strict: true }) as {
      values: Values<OptionTable>;
      positionals: string[];
    };
  } catch (error) {
    throw new UsageError(`${name}: ${describeParseError(error as Error & { code?: string }, spec)}`, name);
  }
  if (parsed.positionals.length > spec.maxPositionals) {
    const extra = parsed.positionals.slice(spec.maxPositionals).join(' ');
    throw new UsageError(
      `${name}: unexpected argument${extra.includes(' ') ? 's' : ''} "${extra}"${
        spec.maxPositionals === 1 ? ' (quote an argument that has spaces)' : ''
      }`,
      name,
    );
  }
  return parsed;
}

function describeParseError(error: Error & { code?: string }, spec: CommandSpec<OptionTable>): string {
  const unknown = /^Unknown option '([^']+)'/.exec(error.message)?.[1];
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown !== undefined) {
    const known = Object.entries(spec.options).flatMap(([long, option]) => [
      `--${long}`,
      ...(option.short ? [`-${option.short}`] : []),
    ]);
    const hint = unknown.startsWith('--') ? didYouMean(unknown, known) : '';
    return `unknown option "${unknown}"${hint || (known.length === 0 ? ' (it takes no options)' : '')}`;
  }
  // Node's message goes on with advice about `--` that does not fit a mistyped flag.
  return error.message.split('\n')[0]?.replace(/\. To specify a positional.*$/, '') ?? error.message;
}

/**
 * ` (did you mean "x"?)`: the config check's suggestion, and for the short words of a command line also a swap
 * of two neighbouring letters (`rnus` → `runs`), the commonest slip at a keyboard.
 */
function didYouMean(name: string, candidates: readonly string[]): string {
  const suggestion = suggest(name, candidates) ?? candidates.find((candidate) => isSwap(name, candidate));
  return suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`;
}

function isSwap(typed: string, candidate: string): boolean {
  if (typed.length !== candidate.length) return false;
  const differences = [...typed].flatMap((char, index) => (char === candidate[index] ? [] : [index]));
  const [first, second] = differences;
  return (
    differences.length === 2 &&
    first !== undefined &&
    second === first + 1 &&
    typed[first] === candidate[second] &&
    typed[second] === candidate[first]
  );
}

/** `--status failed --status cancelled,queued`: each status once, in the order given. */
function runStatuses(values: readonly string[]): RunListStatus[] {
  const statuses = values.flatMap((value) => value.split(',')).map((status) => status.trim());
  for (const status of statuses) {
    if (!(listedStatuses as readonly string[]).includes(status)) {
      throw new UsageError(
        `--status: "${status}" is not a run status; give one or more of ${listedStatuses.join(', ')}${didYouMean(status, listedStatuses)}`,
      );
    }
  }
  return [...new Set(statuses as RunListStatus[])];
}

function requiredPositional(command: CommandName, positionals: string[], what: string): string {
  const [value] = positionals;
  if (value === undefined || value.trim() === '') throw new UsageError(`${command}: give ${what}`, command);
  return value.trim();
}

/** --payload (JSON), --id and the API of `events send` and `signal`; the API checks the bounds. */
function externalEvent(values: { payload?: string; id?: string; url?: string; token?: string }) {
  let payload: unknown;
  if (values.payload !== undefined) {
    try {
      payload = JSON.parse(values.payload);
    } catch (error) {
      throw new UsageError(
        `--payload: not JSON (${(error as Error).message}); quote it, e.g. --payload '{"order":"A1"}'`,
      );
    }
  }
  return { payload, id: values.id, ...apiTarget(values) };
}

function apiTarget(values: { url?: string; token?: string }): ApiTarget {
  return { url: optionalUrl(values.url), token: values.token };
}

function optionalUrl(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (!/^https?:\/\/\S+$/.test(text)) {
    throw new UsageError(`--url: must be an http:// or https:// URL (got "${text}")`);
  }
  return text.replace(/\/+$/, '');
}

/** A comma-separated list of names (`--toolboxes filesystem,search`), or undefined when not given. */
function nameList(option: string, value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0)
    throw new UsageError(`mcp: ${option} needs names, e.g. ${option} filesystem,search`, 'mcp');
  return names;
}

function optionalInteger(
  flag: string,
  text: string | undefined,
  minimum: number,
  maximum = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < minimum || value > maximum) {
    throw new UsageError(
      `${flag}: must be a whole number from ${minimum}${maximum === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${maximum}`} (got "${text}")`,
    );
  }
  return value;
}

/** `--on-busy P`: one of the policies, and only with --session (a new session is never busy). */
function onBusyOf(value: string | undefined, session: string | undefined): OnBusy | undefined {
  if (value === undefined) return undefined;
  if (session === undefined) {
    throw new UsageError('run: --on-busy applies only with --session (a new session is never busy)', 'run');
  }
  const policy = onBusyPolicies.find((known) => known === value);
  if (policy === undefined) {
    throw new UsageError(`run: --on-busy must be one of ${onBusyPolicies.join(', ')}, not "${value}"`, 'run');
  }
  return policy;
}
