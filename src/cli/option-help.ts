// What each option of `ratchet` means, for the usage texts of command-line.ts.
import { runListStatuses } from '../wire/index.js';

/** The statuses `ratchet runs --status` takes. */
export const listedStatuses = runListStatuses;
/** How many runs `ratchet runs` shows without --limit or --all. */
export const defaultRunsShown = 20;

interface OptionHelp {
  /** The option as typed, with its value's placeholder. */
  flag: string;
  /** What it means, in the whole usage text (lines after the first are indented under it). */
  about: string;
  /** What it means for one command (by name), in that command's usage, where that says more or differs. */
  per?: Partial<Record<string, string>>;
}

/** Where the commands about one run find its API (remote-api.ts), as their usage says it. */
const runApiHelp =
  'the API (default: $RATCHET_URL, else the API the run was started on from\n' +
  'this directory, else http://127.0.0.1:8080)';
const runsApiHelp =
  'the API (default: $RATCHET_URL, else the API of the latest run started from\n' +
  'this directory, else http://127.0.0.1:8080)';

/** What each option means, for the usage texts (one entry per option, in this order). */
export const optionHelp: Record<string, OptionHelp> = {
  config: {
    flag: '-c, --config F',
    about: 'config file (default: $RATCHET_CONFIG, else the bundled config/demo.yaml)',
    per: {
      run:
        'config of the API and worker started for the run when there is no --url\n' +
        '(default: $RATCHET_CONFIG, else the bundled config/demo.yaml)',
    },
  },
  port: { flag: '--port N', about: "the API's port (default: api.port of the config; 0 picks a free one)" },
  concurrency: {
    flag: '--concurrency N',
    about: 'steps a worker runs at once (default: worker.concurrency of the config)',
  },
  agent: {
    flag: '--agent A',
    about:
      "run: the agent to work on the task (default: the config's entry agent);\nruns: only this agent's runs",
    per: {
      run: "the agent (or team) to work on the task (default: the config's entry agent)",
      runs: "only this agent's runs",
    },
  },
  url: {
    flag: '--url URL',
    about:
      'the API (default: $RATCHET_URL, else the API the run was started on from\n' +
      'this directory (runs: of the latest run), else http://127.0.0.1:8080);\n' +
      'run: without it, an API and a worker start in the process',
    per: {
      run: 'submit to the API at URL (without it, an API and a worker start in this process)',
      runs: runsApiHelp,
      schedules: 'the API (default: $RATCHET_URL, else http://127.0.0.1:8080)',
      status: runApiHelp,
      attach: runApiHelp,
      cancel: runApiHelp,
      answer: runApiHelp,
      events: 'the API (default: $RATCHET_URL, else http://127.0.0.1:8080)',
      signal: runApiHelp,
    },
  },
  token: {
    flag: '--token T',
    about: 'bearer token for the API (default: $RATCHET_TOKEN)',
    per: { run: 'bearer token for the API at --url (default: $RATCHET_TOKEN)' },
  },
  'max-iterations': {
    flag: '--max-iterations N',
    about: "model calls the run may make (at most the agent's options.max_iterations)",
  },
  timeout: { flag: '--timeout S', about: "seconds the run may take (at most the agent's options.timeout_s)" },
  session: {
    flag: '--session ID',
    about: 'runs: only the runs of this session; run: send the task to this session',
    per: {
      runs: 'only the runs of this session',
      run: 'send the task to this session (a message to it) instead of a new one',
    },
  },
  'on-busy': {
    flag: '--on-busy P',
    about:
      "run: with --session, while its run is active: reject, queue, steer or interrupt (default: the agent's options.on_busy)",
  },
  status: {
    flag: '--status S',
    about: `runs: only runs with this status (repeat it or separate with commas:\n${listedStatuses.join(', ')})`,
    per: {
      runs: `only runs with this status (repeat it or separate with commas:\n${listedStatuses.join(', ')})`,
    },
  },
  limit: {
    flag: '--limit N',
    about: `runs: how many runs to show (default ${defaultRunsShown}; with --all, per page)`,
    per: { runs: `how many runs to show (default ${defaultRunsShown}; with --all, per page)` },
  },
  all: {
    flag: '--all',
    about: 'runs: page on to the oldest run',
    per: { runs: 'page on to the oldest run' },
  },
  payload: {
    flag: '--payload JSON',
    about: "events send, signal: the event's payload, any JSON value (what the waiting run receives)",
    per: {
      events: "the event's payload, any JSON value (what the waiting runs receive)",
      signal: "the signal's payload, any JSON value (what the waiting run receives)",
    },
  },
  id: {
    flag: '--id ID',
    about: 'events send, signal: makes delivery idempotent (the same id twice delivers once)',
    per: {
      events: 'makes delivery idempotent: the same id twice delivers once (default: a new id)',
      signal: 'makes delivery idempotent: the same id twice delivers once (default: a new id)',
    },
  },
  reason: {
    flag: '--reason TEXT',
    about: 'cancel: why (recorded with the run)',
    per: { cancel: 'why (recorded with the run)' },
  },
};

/** Where an option's meaning starts, after its flag. */
const optionColumn = 19;

/** `  --flag X      meaning`, its further lines under the meaning's first. */
export function optionLines(flag: string, about: string): string {
  const indent = ' '.repeat(optionColumn + 2);
  return `  ${flag.padEnd(optionColumn)}${about.replaceAll('\n', `\n${indent}`)}`;
}
