import {
  RatchetApiError,
  type Run,
  type RunListFilters,
  type RunListItem,
  type RunListStatus,
} from '../client/index.js';
import type { ApiTarget } from './command-line.js';
import { defaultRunsShown } from './option-help.js';
import type { ProcessIo } from './process-io.js';
import { remoteApi } from './remote-api.js';
import { readRunHistory, runHistoryPath } from './run-history.js';
import { printable } from './terminal.js';

export interface RunsOptions extends ApiTarget {
  statuses: RunListStatus[];
  agent: string | undefined;
  session: string | undefined;
  limit: number | undefined;
  all: boolean;
}

/** How many runs of a page are read (GET /v1/runs/:id, for iterations and tokens) at once. */
const readsAtOnce = 8;
/** Runs a page fetches with --all and no --limit. */
const allPageSize = 100;

/**
 * `ratchet runs`: the API's run list (GET /v1/runs), newest first, filtered by status, agent and session;
 * the newest `--limit` (default 20), or with `--all` every run, page after page. Each run's iterations and
 * tokens are read from the run itself, which the list does not carry. The API: --url, else $RATCHET_URL, else
 * the one this directory last started a run on (.ratchet/runs.jsonl), else the `ratchet dev` default.
 */
export async function runsCommand(options: RunsOptions, io: ProcessIo): Promise<number> {
  const given = options.url !== undefined || (io.env.RATCHET_URL ?? '') !== '';
  const latest = given ? undefined : readRunHistory(runHistoryPath()).at(-1);
  const { client, url } = remoteApi(options, io, latest === undefined ? {} : { url: latest.url });
  const out = (line: string) => io.stdout.write(`${line}\n`);

  if (options.session !== undefined) {
    const session = await client.session(options.session);
    out(`session ${session.id} (agent ${printable(session.agent)}, ${session.status})`);
  }
  const filters: RunListFilters = {
    ...(options.statuses.length > 0 ? { status: options.statuses } : {}),
    ...(options.agent === undefined ? {} : { agent: options.agent }),
    ...(options.session === undefined ? {} : { session_id: options.session }),
  };
  const wanted = options.all ? Number.POSITIVE_INFINITY : (options.limit ?? defaultRunsShown);
  const pageSize = options.all ? (options.limit ?? allPageSize) : (options.limit ?? defaultRunsShown);

  let shown = 0;
  let cursor: string | undefined;
  let more = false;
  do {
    const page = await client.list({ ...filters, limit: Math.min(pageSize, wanted - shown), cursor });
    const runs = await readRuns(page.runs, (id) => client.get(id));
    if (shown === 0 && runs.length > 0) out(header);
    for (const { item, run } of runs) out(row(item, run));
    shown += runs.length;
    cursor = page.next_cursor ?? undefined;
    // A page may hold fewer runs than asked and still go on (a rare filter): fill up to the limit.
    more = cursor !== undefined;
  } while (more && shown < wanted);

  if (shown === 0) out(`no runs${describeFilters(options)} on the API at ${url}`);
  else if (more) {
    out(`(more runs: ${io.invocation} runs --all, or --limit N up to 500)`);
  }
  return 0;
}

const header = `${'RUN'.padEnd(31)}  ${'STATUS'.padEnd(13)}  ${'CREATED'.padEnd(20)}  ${'ITER'.padStart(4)}  ${'TOKENS'.padStart(9)}  AGENT`;

function row(item: RunListItem, run: Run | undefined): string {
  const created = item.created_at.replace(/\.\d+Z$/, 'Z');
  const iterations = run === undefined ? '-' : String(run.iterations);
  const tokens = run === undefined ? '-' : String(run.usage.input_tokens + run.usage.output_tokens);
  const agent = `${printable(item.agent)}${item.root_run_id === null ? '' : ` (under ${item.root_run_id})`}`;
  return `${item.id.padEnd(31)}  ${item.status.padEnd(13)}  ${created.padEnd(20)}  ${iterations.padStart(4)}  ${tokens.padStart(9)}  ${agent}`;
}

/** Each listed run with its record; a run deleted since the page was read has none. */
async function readRuns(
  items: readonly RunListItem[],
  read: (runId: string) => Promise<Run>,
): Promise<{ item: RunListItem; run: Run | undefined }[]> {
  const runs: (Run | undefined)[] = new Array(items.length);
  let next = 0;
  const reader = async () => {
    while (next < items.length) {
      const index = next++;
      const item = items[index] as RunListItem;
      try {
        runs[index] = await read(item.id);
      } catch (error) {
        if (!(error instanceof RatchetApiError && error.status === 404)) throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(readsAtOnce, items.length) }, reader));
  return items.map((item, index) => ({ item, run: runs[index] }));
}

function describeFilters(options: RunsOptions): string {
  const parts = [
    options.statuses.length > 0 ? `with status ${options.statuses.join(' or ')}` : '',
    options.agent === undefined ? '' : `of agent ${printable(options.agent)}`,
    options.session === undefined ? '' : `in session ${options.session}`,
  ].filter(Boolean);
  return parts.length === 0 ? '' : ` ${parts.join(' ')}`;
}
