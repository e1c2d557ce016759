import { parseArgs } from 'node:util';

/** A parsed `ratchet` command line. */
export type Command =
  | { name: 'help' }
  | { name: 'dev'; config: string | undefined; port: number | undefined }
  | { name: 'api'; config: string | undefined; port: number | undefined }
  | { name: 'worker'; config: string | undefined; concurrency: number | undefined }
  | { name: 'mcp'; config: string | undefined }
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
    }
  | { name: 'config-validate'; file: string };

/** The command line is wrong: the CLI prints the message and the usage text, and exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const usageText = `Usage: ratchet <command> [options]

Commands:
  dev [--config F] [--port N]            API and worker in one process (starts redis-server if needed)
  api [--config F] [--port N]            the HTTP API
  worker [--config F] [--concurrency N]  a worker; run as many as you like
  mcp [--config F]                       an MCP server on stdio (the API's /mcp serves it over HTTP)
  run "<task>" [--agent A] [--url URL]   submit a task, stream its events, answer its questions
  config validate F                      check a config file: each problem with its path, or a summary

Options:
  -c, --config F     config file (default: $RATCHET_CONFIG, else the bundled config/demo.yaml)
  --port N           the API's port (default: api.port of the config; 0 picks a free one)
  --concurrency N    steps a worker runs at once (default: worker.concurrency of the config)
  --agent A          the agent to work on the task (default: the config's entry agent)
  --url URL          the API to use; without it, run starts an API and a worker in its process
  --token T          bearer token for --url (default: $RATCHET_TOKEN)
  --max-iterations N model calls the run may make (at most the agent's options.max_iterations)
  --timeout S        seconds the run may take (at most the agent's options.timeout_s)
  -h, --help         this text

Environment: REDIS_URL, RATCHET_CONFIG, RATCHET_TOKEN, RATCHET_LOG_LEVEL.
run exits 0 when the run completed, 1 when it failed or was cancelled, 130 on Ctrl-C.
Usage errors exit 2.`;

const configOption = { config: { type: 'string', short: 'c' } } as const;
const portOption = { port: { type: 'string' } } as const;

/** Parses `ratchet`'s arguments (without node and the script). Throws UsageError. */
export function parseCommandLine(argv: readonly string[]): Command {
  const [name, ...rest] = argv;
  if (name === undefined) throw new UsageError('no command given');
  if (name === '-h' || name === '--help' || name === 'help') return { name: 'help' };
  if (rest.includes('-h') || rest.includes('--help')) return { name: 'help' };
  switch (name) {
    case 'dev':
    case 'api': {
      const { values } = parse(name, rest, { ...configOption, ...portOption }, 0);
      return { name, config: values.config, port: optionalInteger('--port', values.port, 0, 65_535) };
    }
    case 'mcp': {
      const { values } = parse(name, rest, configOption, 0);
      return { name, config: values.config };
    }
    case 'worker': {
      const { values } = parse(name, rest, { ...configOption, concurrency: { type: 'string' } }, 0);
      return {
        name,
        config: values.config,
        concurrency: optionalInteger('--concurrency', values.concurrency, 1),
      };
    }
    case 'run': {
      const { values, positionals } = parse(
        name,
        rest,
        {
          ...configOption,
          agent: { type: 'string' },
          url: { type: 'string' },
          token: { type: 'string' },
          'max-iterations': { type: 'string' },
          timeout: { type: 'string' },
        },
        Number.POSITIVE_INFINITY,
      );
      const task = positionals.join(' ').trim();
      if (task === '') throw new UsageError('run: give the task, e.g. ratchet run "What is 2 + 2?"');
      if (values.url !== undefined) {
        if (!/^https?:\/\/\S+$/.test(values.url)) {
          throw new UsageError(`--url: must be an http:// or https:// URL (got "${values.url}")`);
        }
        if (values.config !== undefined) {
          throw new UsageError('run: --config applies only without --url (the API has its own config)');
        }
      } else if (values.token !== undefined) {
        throw new UsageError('run: --token applies only with --url');
      }
      return {
        name,
        task,
        agent: values.agent,
        url: values.url?.replace(/\/+$/, ''),
        token: values.token,
        config: values.config,
        maxIterations: optionalInteger('--max-iterations', values['max-iterations'], 1),
        timeoutS: optionalInteger('--timeout', values.timeout, 1),
      };
    }
    case 'config': {
      const [action, ...files] = rest;
      if (action !== 'validate') {
        throw new UsageError(
          action === undefined
            ? 'config: say what to do: config validate F'
            : `config: unknown action "${action}"`,
        );
      }
      const { positionals } = parse('config validate', files, {}, 1);
      const [file] = positionals;
      if (file === undefined) throw new UsageError('config validate: give the config file');
      return { name: 'config-validate', file };
    }
    default:
      throw new UsageError(`unknown command "${name}"`);
  }
}

type OptionSpec = Record<string, { type: 'string'; short?: string }>;

function parse<Options extends OptionSpec>(
  command: string,
  args: readonly string[],
  options: Options,
  maxPositionals: number,
): { values: { [Name in keyof Options]?: string }; positionals: string[] } {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    // Node's message goes on with advice about `--` that does not fit a mistyped flag.
    const message = (error as Error).message.split('\n')[0]?.replace(/\. To specify a positional.*$/, '');
    throw new UsageError(`${command}: ${message}`);
  }
  if (parsed.positionals.length > maxPositionals) {
    const extra = parsed.positionals.slice(maxPositionals).join(' ');
    throw new UsageError(`${command}: unexpected argument${extra.includes(' ') ? 's' : ''} "${extra}"`);
  }
  return parsed as { values: { [Name in keyof Options]?: string }; positionals: string[] };
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
