// The Runs page (#/runs?status=&agent=&since=&q=&text=): counts by status, the filtered list of runs newest
// first, paged with the API's cursor, polled every 2 s so new runs and status changes show without a reload.
// Each run shows the first line of its input (what it is about); the search box finds runs by words of it,
// or by run id prefix. At a narrow width each row is a card of labelled cells instead of a wide table.
//
// Test ids: runs-summary, summary-<status> (each holds data-count), runs-filters, filter-status,
// filter-agent, filter-since, filter-q, search-submit, clear-filters, runs-table, run-row-<id> (data-status),
// run-row-status, run-link, run-task, run-tokens, run-cost, next-page, previous-page, page-number, runs-empty.
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  type RunListItem,
  type RunListStatus,
  type RunSummary,
  runListStatuses,
} from '../../client/index.js';
import { ErrorNote } from '../components/error-note.js';
import { StatusBadge } from '../components/status-badge.js';
import { TableHead } from '../components/table-head.js';
import { Text } from '../components/text.js';
import { usePoll } from '../components/use-poll.js';
import { formatCost, formatCount, formatDuration, formatTime, none } from '../format.js';
import type { PageProps } from '../page-props.js';
import { href, runHref, sessionHref } from '../router.js';

/** The statuses the page counts and filters by: those the API lists but `waiting` (docs/console.md). */
const statuses = runListStatuses.filter((status) => status !== 'waiting');

const sinceChoices: ReadonlyArray<{ value: string; label: string; ms: number }> = [
  { value: '15m', label: 'the last 15 minutes', ms: 15 * 60_000 },
  { value: '1h', label: 'the last hour', ms: 3_600_000 },
  { value: '24h', label: 'the last 24 hours', ms: 86_400_000 },
  { value: '7d', label: 'the last 7 days', ms: 7 * 86_400_000 },
];

/** The filters the hash carries: `q` a run id prefix, `text` words of the runs' input line. */
interface RunFilters {
  status: string;
  agent: string;
  since: string;
  q: string;
  text: string;
}

function filtersOf(params: Record<string, string>): RunFilters {
  return {
    status: params.status ?? '',
    agent: params.agent ?? '',
    since: params.since ?? '',
    q: params.q ?? '',
    text: params.text ?? '',
  };
}

/** What the one search box holds: a run id prefix goes to `q`, anything else to `text`. */
function searchOf(value: string): Pick<RunFilters, 'q' | 'text'> {
  const trimmed = value.trim();
  return /^run_[0-9a-z_]*$/.test(trimmed) ? { q: trimmed, text: '' } : { q: '', text: trimmed };
}

/** The API's bound on `text` (GET /v1/runs): the most an input line holds. */
const searchMaxChars = 200;

/** `since` as the API takes it: a preset (`1h`) counted back from now, or a time given as is. */
function sinceTime(since: string): string | undefined {
  if (since === '') return undefined;
  const preset = sinceChoices.find((choice) => choice.value === since);
  if (preset !== undefined) return new Date(Date.now() - preset.ms).toISOString();
  const parsed = Date.parse(since);
  return Number.isNaN(parsed) ? undefined : new Date(parsed).toISOString();
}

function isListedStatus(value: string): value is RunListStatus {
  return (statuses as readonly string[]).includes(value);
}

/**
 * Input plus output tokens and the cost: a root run's with every run below it (a team's members, a
 * delegating agent's delegates), a child run's own; null when the run's record could not be read.
 */
function usageOf(run: RunListItem): { tokens: number | null; cost: number | null } {
  const usage = run.tree_usage ?? run.usage;
  if (usage === null) return { tokens: null, cost: null };
  return {
    tokens: usage.input_tokens + usage.output_tokens,
    cost: run.tree_usage?.cost_usd ?? run.cost_usd,
  };
}

export function RunsPage({ client, params }: PageProps) {
  const filters = filtersOf(params);
  const limit = Math.min(500, Math.max(1, Number(params.limit ?? '') || 50));
  // The cursors of the pages before this one: [] on the first page. A filter change starts again.
  const filterKey = `${filters.status}|${filters.agent}|${filters.since}|${filters.q}|${filters.text}|${limit}`;
  const [paging, setPaging] = useState<{ filterKey: string; cursors: string[] }>({ filterKey, cursors: [] });
  const cursors = paging.filterKey === filterKey ? paging.cursors : [];
  const setCursors = (change: (list: string[]) => string[]) =>
    setPaging({ filterKey, cursors: change(cursors) });
  const cursor = cursors.at(-1);

  const summary = usePoll(
    (signal) => {
      const since = sinceTime(filters.since);
      return client.summary(since === undefined ? {} : { since }, { signal });
    },
    [client, filters.since],
  );
  const page = usePoll(
    (signal) => {
      const since = sinceTime(filters.since);
      return client.list(
        {
          limit,
          ...(isListedStatus(filters.status) ? { status: filters.status } : {}),
          ...(filters.agent === '' ? {} : { agent: filters.agent }),
          ...(since === undefined ? {} : { since }),
          ...(filters.q === '' ? {} : { q: filters.q }),
          ...(filters.text === '' ? {} : { text: filters.text.slice(0, searchMaxChars) }),
          ...(cursor === undefined ? {} : { cursor }),
        },
        { signal },
      );
    },
    [client, filterKey, cursor],
  );

  const setFilters = (next: Partial<RunFilters>) => {
    const merged = { ...filters, ...next };
    location.hash = href(['runs'], { ...merged, limit: params.limit });
  };

  return (
    <section class="runs-page" aria-labelledby="runs-heading">
      <h1 id="runs-heading">Runs</h1>
      <SummaryBar
        summary={summary.data}
        active={filters.status}
        onPick={(status) => setFilters({ status })}
      />
      <ErrorNote error={summary.error} />
      <FilterForm filters={filters} onChange={setFilters} />
      <ErrorNote error={page.error} />
      {page.data === undefined ? (
        page.error === undefined && <p aria-live="polite">Loading runs…</p>
      ) : page.data.runs.length === 0 ? (
        <p data-testid="runs-empty">
          {cursor === undefined
            ? 'No runs match.'
            : 'No more runs on this page; go back, or follow the next page.'}
        </p>
      ) : (
        <RunsTable runs={page.data.runs} />
      )}
      <nav class="pager" aria-label="Pages of runs">
        <button
          type="button"
          disabled={cursors.length === 0}
          onClick={() => setCursors((list) => list.slice(0, -1))}
          data-testid="previous-page"
        >
          Previous page
        </button>
        <span data-testid="page-number">Page {cursors.length + 1}</span>
        <button
          type="button"
          disabled={!page.data?.next_cursor}
          onClick={() => {
            const next = page.data?.next_cursor;
            if (next) setCursors((list) => [...list, next]);
          }}
          data-testid="next-page"
        >
          Next page
        </button>
      </nav>
    </section>
  );
}

function SummaryBar(props: {
  summary: RunSummary | undefined;
  active: string;
  onPick: (status: string) => void;
}) {
  const { summary, active, onPick } = props;
  return (
    <section class="summary" aria-label="Runs by status" data-testid="runs-summary">
      <ul class="summary-list">
        <li>
          <button
            type="button"
            class="summary-item"
            aria-pressed={active === ''}
            onClick={() => onPick('')}
            data-testid="summary-total"
            data-count={summary?.total}
          >
            <span class="summary-count">{summary === undefined ? none : formatCount(summary.total)}</span> all
          </button>
        </li>
        {statuses.map((status) => {
          const count = summary?.counts[status];
          return (
            <li key={status}>
              <button
                type="button"
                class={`summary-item summary-${status}`}
                aria-pressed={active === status}
                onClick={() => onPick(active === status ? '' : status)}
                data-testid={`summary-${status}`}
                data-count={count}
              >
                <span class="summary-count">{formatCount(count)}</span> <StatusBadge status={status} />
              </button>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function FilterForm({
  filters,
  onChange,
}: {
  filters: RunFilters;
  onChange: (next: Partial<RunFilters>) => void;
}) {
  const shownSearch = filters.q !== '' ? filters.q : filters.text;
  const [search, setSearch] = useState(shownSearch);
  const [agent, setAgent] = useState(filters.agent);
  // The hash's values as the boxes last took them. When the hash changes (back, a summary pick, Clear), a box
  // takes its new value only if nobody typed in it since: the hash of a click can land after the next words
  // were typed, and must not wipe them.
  const taken = useRef({ search: shownSearch, agent: filters.agent });
  useEffect(() => {
    setSearch((typed) => (typed === taken.current.search ? shownSearch : typed));
    taken.current.search = shownSearch;
  }, [shownSearch]);
  useEffect(() => {
    setAgent((typed) => (typed === taken.current.agent ? filters.agent : typed));
    taken.current.agent = filters.agent;
  }, [filters.agent]);
  const clear = () => {
    setSearch('');
    setAgent('');
    taken.current = { search: '', agent: '' };
    onChange({ status: '', agent: '', since: '', q: '', text: '' });
  };
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    onChange({ ...searchOf(search), agent: agent.trim() });
  };
  const presets = sinceChoices.some((choice) => choice.value === filters.since) || filters.since === '';
  return (
    <form class="filters" onSubmit={submit} data-testid="runs-filters" aria-label="Filter runs">
      <div class="field field-search">
        <label for="filter-q">Search the task, or a run id</label>
        <input
          id="filter-q"
          type="search"
          value={search}
          maxLength={searchMaxChars}
          placeholder="words of the task, or run_…"
          onInput={(event) => setSearch(event.currentTarget.value)}
          data-testid="filter-q"
        />
      </div>
      <div class="field">
        <label for="filter-status">Status</label>
        <select
          id="filter-status"
          value={filters.status}
          onChange={(event) => onChange({ status: event.currentTarget.value })}
          data-testid="filter-status"
        >
          <option value="">any</option>
          {statuses.map((status) => (
            <option key={status} value={status}>
              {status.replace('_', ' ')}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="filter-since">Created in</label>
        <select
          id="filter-since"
          value={filters.since}
          onChange={(event) => onChange({ since: event.currentTarget.value })}
          data-testid="filter-since"
        >
          <option value="">any time</option>
          {sinceChoices.map((choice) => (
            <option key={choice.value} value={choice.value}>
              {choice.label}
            </option>
          ))}
          {!presets && <option value={filters.since}>since {filters.since}</option>}
        </select>
      </div>
      <div class="field">
        <label for="filter-agent">Agent</label>
        <input
          id="filter-agent"
          type="text"
          value={agent}
          onInput={(event) => setAgent(event.currentTarget.value)}
          data-testid="filter-agent"
        />
      </div>
      <div class="field field-buttons">
        <button type="submit" data-testid="search-submit">
          Search
        </button>
        <button type="button" class="link-button" onClick={clear} data-testid="clear-filters">
          Clear
        </button>
      </div>
    </form>
  );
}

/**
 * The runs as a table at a wide width; at a narrow one (styles.css) each row becomes a card whose cells carry
 * their column's name (data-label), so nothing hides behind a sideways scroll.
 */
function RunsTable({ runs }: { runs: readonly RunListItem[] }) {
  return (
    <div class="table-scroll">
      <table class="runs-table" data-testid="runs-table">
        <caption class="visually-hidden">Runs, newest first</caption>
        <TableHead
          columns={[
            { label: 'Status' },
            { label: 'Task' },
            { label: 'Agent' },
            { label: 'Started' },
            { label: 'Duration', numeric: true },
            { label: 'Iterations', numeric: true },
            { label: 'Tokens', numeric: true },
            { label: 'Cost', numeric: true },
          ]}
        />
        <tbody>
          {runs.map((run) => {
            const { tokens, cost } = usageOf(run);
            const withBelow = run.tree_usage !== null ? ' (with the runs below it)' : '';
            return (
              <tr key={run.id} data-testid={`run-row-${run.id}`} data-status={run.status}>
                <td class="cell-status">
                  <StatusBadge status={run.status} testId="run-row-status" />
                </td>
                <td class="cell-task">
                  <a href={runHref(run.id)} class="task-link" data-testid="run-link">
                    {run.input_line === null ? (
                      <span class="mono">{run.id}</span>
                    ) : (
                      <span data-testid="run-task">
                        <Text value={run.input_line} />
                      </span>
                    )}
                  </a>
                  <div class="run-ids muted">
                    {run.input_line !== null && <span class="mono">{run.id}</span>}
                    {run.root_run_id !== null && <span> (child)</span>}
                    {run.input_line !== null && ' · '}
                    <a href={sessionHref(run.session_id)} class="mono">
                      {run.session_id}
                    </a>
                  </div>
                </td>
                <td data-label="Agent">
                  <Text value={run.agent} />
                </td>
                <td data-label="Started" class="cell-time">
                  <time dateTime={run.created_at}>{formatTime(run.created_at)}</time>
                </td>
                <td data-label="Duration" class="number">
                  {formatDuration(run.duration_ms)}
                </td>
                <td data-label="Iterations" class="number">
                  {formatCount(run.iterations)}
                </td>
                <td
                  data-label="Tokens"
                  class="number"
                  title={`input and output tokens${withBelow}`}
                  data-testid="run-tokens"
                >
                  {formatCount(tokens)}
                </td>
                <td data-label="Cost" class="number" title={`cost${withBelow}`} data-testid="run-cost">
                  {formatCost(cost)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
