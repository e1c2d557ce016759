// Test ids: system-facts, admin-queues, system-workers, worker-row-<worker id>, worker-heartbeat, worker-shards,
// system-queues, queues-legend, queue-shard-<shard> (rows data-kind, cells data-state), system-runs-by-status,
// system-agents, agent-row-<name>.
import type { AgentSummary, RatchetClient, SystemState } from '../../client/index.js';
import { ErrorNote } from '../components/error-note.js';
import { StatusBadge } from '../components/status-badge.js';
import { TableHead } from '../components/table-head.js';
import { Text } from '../components/text.js';
import { usePoll } from '../components/use-poll.js';
import { elapsedMs, formatCost, formatCount, formatDuration, formatTime, none } from '../format.js';
import type { PageProps } from '../page-props.js';
import { href } from '../router.js';
import { storedToken } from '../token-store.js';

interface SystemView {
  system: SystemState;
  agents: AgentSummary[];
}

type Worker = SystemState['workers'][number];
type ShardQueue = SystemState['queues'][number];

type QueueState = 'waiting' | 'active' | 'delayed' | 'failed' | 'prioritized';

/** Workers and their heartbeats, the step queues of each shard by kind, runs by status, agents' usage. */
export function SystemPage({ client }: PageProps) {
  const poll = usePoll((signal) => loadSystem(client, signal), [client]);
  const view = poll.data;
  // A browser opening the board sends no bearer token: with tokens, the board takes it once in its address.
  const tokenNeeded = storedToken() !== undefined;
  return (
    <section aria-labelledby="system-heading">
      <h1 id="system-heading">System</h1>
      <ErrorNote error={poll.error} />
      {view === undefined ? (
        poll.error === undefined && <p role="status">Loading…</p>
      ) : (
        <>
          <dl class="facts" data-testid="system-facts">
            <div>
              <dt>Version</dt>
              <dd>{view.system.version}</dd>
            </div>
            <div>
              <dt>Config hash</dt>
              <dd>
                <code>{view.system.config_hash}</code>
              </dd>
            </div>
            <div>
              <dt>Queue board</dt>
              <dd data-testid="admin-queues">
                {view.system.admin_queues === null ? (
                  <>
                    off (<code>api.admin_queues</code>)
                  </>
                ) : (
                  <>
                    <a href={view.system.admin_queues}>bull-board</a>
                    {tokenNeeded && (
                      <span class="muted">
                        {' '}
                        (with a token: open <code>{view.system.admin_queues}?token=…</code> once)
                      </span>
                    )}
                  </>
                )}
              </dd>
            </div>
            <div>
              <dt>Workers alive</dt>
              <dd>
                {view.system.workers.filter((worker) => worker.alive).length} of {view.system.workers.length}
              </dd>
            </div>
          </dl>
          <Workers workers={view.system.workers} />
          <Queues queues={view.system.queues} waitingInput={view.system.runs_by_status.waiting_input ?? 0} />
          <RunsByStatus counts={view.system.runs_by_status} />
          <Agents agents={view.agents} />
        </>
      )}
    </section>
  );
}

async function loadSystem(client: RatchetClient, signal: AbortSignal): Promise<SystemView> {
  const [system, agents] = await Promise.all([client.system({ signal }), client.agents({ signal })]);
  return { system, agents };
}

function Workers({ workers }: { workers: Worker[] }) {
  return (
    <section aria-labelledby="workers-heading">
      <h2 id="workers-heading">Workers</h2>
      {workers.length === 0 ? (
        <p>No worker has a heartbeat: no step will run until one starts.</p>
      ) : (
        <div class="table-scroll">
          <table data-testid="system-workers">
            <caption class="visually-hidden">Workers and their heartbeats</caption>
            <TableHead
              columns={[
                { label: 'Worker' },
                { label: 'Host and pid' },
                { label: 'Concurrency' },
                { label: 'Serves' },
                { label: 'Started' },
                { label: 'Last heartbeat' },
                { label: 'State' },
              ]}
            />
            <tbody>
              {workers.map((worker) => (
                <tr key={worker.id} data-testid={`worker-row-${worker.id}`}>
                  <td>
                    <code>{worker.id}</code>
                  </td>
                  <td>
                    {worker.host === null ? none : <Text value={worker.host} />} / {worker.pid}
                  </td>
                  <td>{formatCount(worker.concurrency)}</td>
                  <td data-testid="worker-shards">{servedShards(worker.shards)}</td>
                  <td>{formatTime(worker.started_at)}</td>
                  <td data-testid="worker-heartbeat">
                    {worker.last_heartbeat_at === null ? (
                      none
                    ) : (
                      <time dateTime={worker.last_heartbeat_at} title={formatTime(worker.last_heartbeat_at)}>
                        {formatDuration(elapsedMs(worker.last_heartbeat_at))} ago
                      </time>
                    )}
                  </td>
                  <td>
                    <span class={worker.alive ? 'status status-completed' : 'status status-failed'}>
                      {worker.alive ? 'alive' : 'heartbeat expired'}
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** Which shards a worker takes steps from, named as shards (a bare "0" reads as "none"). */
function servedShards(shards: readonly number[] | null): string {
  if (shards === null) return 'every shard';
  return shards.length === 1 ? `shard ${shards[0]}` : `shards ${shards.join(', ')}`;
}

/** The queue columns: BullMQ's delayed jobs split into parked steps and retries waiting for their backoff. */
const queueColumns = [
  { key: 'waiting', label: 'waiting' },
  { key: 'active', label: 'running' },
  { key: 'parked', label: 'parked (waiting for an answer or another run)' },
  { key: 'retrying', label: 'waiting to retry' },
  { key: 'failed', label: 'failed' },
  { key: 'prioritized', label: 'queued (the run waits for a slot)' },
] as const;

type QueueColumn = (typeof queueColumns)[number]['key'];

function columnCount(counts: Partial<Record<QueueState | 'parked', number>>, column: QueueColumn): number {
  if (column === 'parked') return counts.parked ?? 0;
  if (column === 'retrying') return Math.max(0, (counts.delayed ?? 0) - (counts.parked ?? 0));
  return counts[column] ?? 0;
}

function Queues({ queues, waitingInput }: { queues: ShardQueue[]; waitingInput: number }) {
  return (
    <section aria-labelledby="queues-heading">
      <h2 id="queues-heading">Step queues</h2>
      <p class="page-intro" data-testid="queues-legend">
        A parked step holds no worker while it waits for a person's answer, for the runs it started, for a
        state key or a rate limit: it is not stuck, and goes on when what it waits for comes.
        {waitingInput > 0 && (
          <>
            {' '}
            {waitingInput === 1 ? '1 run waits' : `${waitingInput} runs wait`} for an answer:{' '}
            <a href={href(['inbox'])}>answer in the Inbox</a>.
          </>
        )}
      </p>
      <div class="shard-list" data-testid="system-queues">
        {queues.map((queue) => {
          const kinds = Object.keys(queue.by_kind).sort();
          return (
            <section
              key={queue.shard}
              class="shard"
              aria-labelledby={`shard-${queue.shard}-heading`}
              data-testid={`queue-shard-${queue.shard}`}
            >
              <h3 id={`shard-${queue.shard}-heading`}>Shard {queue.shard}</h3>
              <div class="table-scroll">
                <table>
                  <caption class="visually-hidden">Steps of shard {queue.shard} by kind and state</caption>
                  <thead>
                    <tr>
                      <th scope="col">Step kind</th>
                      {queueColumns.map((column) => (
                        <th scope="col" key={column.key}>
                          {column.label}
                        </th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {kinds.map((kind) => (
                      <tr key={kind} data-kind={kind}>
                        <th scope="row">
                          <Text value={kind} />
                        </th>
                        {queueColumns.map((column) => (
                          <td key={column.key} data-state={column.key}>
                            {formatCount(columnCount(queue.by_kind[kind] ?? {}, column.key))}
                          </td>
                        ))}
                      </tr>
                    ))}
                  </tbody>
                  <tfoot>
                    <tr>
                      <th scope="row">all kinds</th>
                      {queueColumns.map((column) => (
                        <td key={column.key} data-state={column.key}>
                          {formatCount(columnCount({ ...queue.counts, parked: queue.parked }, column.key))}
                        </td>
                      ))}
                    </tr>
                  </tfoot>
                </table>
              </div>
              <p class="muted">
                Waiting for child steps: {formatCount(queue.counts.waiting_children)}.
                {queue.by_kind_sampled && ' The split by kind is from a sample of the jobs.'}
              </p>
            </section>
          );
        })}
      </div>
    </section>
  );
}

function RunsByStatus({ counts }: { counts: Record<string, number> }) {
  const statuses = Object.keys(counts).sort();
  return (
    <section aria-labelledby="runs-by-status-heading">
      <h2 id="runs-by-status-heading">Runs by status</h2>
      <ul class="summary-list" data-testid="system-runs-by-status">
        {statuses.map((status) => (
          <li key={status}>
            <a class={`summary-item summary-${status}`} href={href(['runs'], { status })}>
              <span class="summary-count">{formatCount(counts[status])}</span> <StatusBadge status={status} />
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Agents({ agents }: { agents: AgentSummary[] }) {
  return (
    <section aria-labelledby="agents-heading">
      <h2 id="agents-heading">Agents</h2>
      <div class="table-scroll">
        <table data-testid="system-agents">
          <caption class="visually-hidden">Agents, handoff groups and teams with their usage</caption>
          <TableHead
            columns={[
              { label: 'Name' },
              { label: 'Kind' },
              { label: 'Model requests' },
              { label: 'Tokens in' },
              { label: 'Tokens out' },
              { label: 'Cost' },
            ]}
          />
          <tbody>
            {agents.map((agent) => (
              <tr key={agent.name} data-testid={`agent-row-${agent.name}`}>
                <td>
                  <a href={href(['runs'], { agent: agent.name })}>
                    <Text value={agent.name} />
                  </a>
                  {agent.description !== '' && (
                    <div class="muted">
                      <Text value={agent.description} />
                    </div>
                  )}
                </td>
                <td>{agent.kind}</td>
                <td>{formatCount(agent.usage.requests)}</td>
                <td>{formatCount(agent.usage.input_tokens)}</td>
                <td>{formatCount(agent.usage.output_tokens)}</td>
                <td>{formatCost(agent.usage.cost_usd)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
