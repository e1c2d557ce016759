import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Message } from '../../src/chat/index.js';
import { loadConfig } from '../../src/config/index.js';
import type { RatchetEvent } from '../../src/events/event.js';
import { silentLogger } from '../../src/log/index.js';
import '../../src/models/index.js';
import { engineFromConfig } from '../../src/engine/index.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import { jobLockKey, shardPrefix, stepQueueName } from '../../src/redis/keys.js';
import { RatchetWorker } from '../../src/worker/index.js';
import { freePort, type OwnRedis, startRedisServer } from '../helpers/find-redis.js';
import { type Scenario, scenarioAgents, writeChaosConfig } from './chaos-config.js';

/**
 * Chaos: a mix of runs submitted through the HTTP API (tool loops, a delegation, parallel spawns, a question
 * answered, a long run that compacts its context) while worker processes are SIGKILLed at random and new ones
 * started, and Redis (with AOF) is killed and restarted once. Every run must end exactly as the same kind of
 * run ends without faults: nothing lost, nothing duplicated, and every repeated model call explained by a kill, a takeover
 * or the Redis restart. Seeded: a failing run can be replayed.
 */
export interface ChaosOptions {
  runs: number;
  workers: number;
  /** SIGKILL a worker about this often (ms, ±50 %). */
  killEveryMs: number;
  /** Give up waiting for the runs after this long. */
  timeoutMs: number;
  restartRedis: boolean;
  lockDurationMs: number;
  stalledIntervalMs: number;
  modelDelayMs: number;
  seed: number;
  log?: (line: string) => void;
}

export interface ChaosReport {
  runs: number;
  completed: number;
  kills: number;
  workerStarts: number;
  redisRestarts: number;
  lostMessages: number;
  duplicatedMessages: number;
  lostEvents: number;
  duplicatedEvents: number;
  modelCalls: number;
  referenceModelCalls: number;
  repeatedCalls: number;
  /** Repeats whose earlier call was made by a process that was killed, or during the Redis restart. */
  explainedRepeats: number;
  recoveries: number[];
  wallMs: number;
  failures: string[];
}

const repoRoot = resolve(import.meta.dirname, '../..');

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

interface Worker {
  child: ChildProcess;
  pid: number;
  bullmqIds: string[];
  output: string;
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => {});
  const next = random(options.seed);
  const dir = mkdtempSync(join(tmpdir(), 'ratchet-chaos-'));
  const redisDir = mkdtempSync(join(tmpdir(), 'ratchet-chaos-redis-'));
  let redis: OwnRedis | undefined = await startRedisServer({ appendOnly: true, dir: redisDir });
  const port = redis.port;
  const apiPort = await freePort();
  const configPath = writeChaosConfig({
    dir,
    redisUrl: redis.url,
    prefix: 'chaos',
    apiPort,
    lockDurationMs: options.lockDurationMs,
    stalledIntervalMs: options.stalledIntervalMs,
    modelDelayMs: options.modelDelayMs,
  });
  const loaded = loadConfig(configPath);
  const client = createRedis({ url: redis.url, logger: silentLogger(), name: 'chaos' });
  const engine = engineFromConfig({ config: loaded.config, redis: client, logger: silentLogger() });
  const children: ChildProcess[] = [];
  const workers: Worker[] = [];
  const killedPids = new Set<number>();
  const report: ChaosReport = {
    runs: options.runs,
    completed: 0,
    kills: 0,
    workerStarts: 0,
    redisRestarts: 0,
    lostMessages: 0,
    duplicatedMessages: 0,
    lostEvents: 0,
    duplicatedEvents: 0,
    modelCalls: 0,
    referenceModelCalls: 0,
    repeatedCalls: 0,
    explainedRepeats: 0,
    recoveries: [],
    wallMs: 0,
    failures: [],
  };
  const started = Date.now();
  let redisDownFrom = Number.POSITIVE_INFINITY;
  let redisDownUntil = Number.NEGATIVE_INFINITY;

  const spawnChild = (args: string[]) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args, '--config', configPath], {
      cwd: repoRoot,
      env: { ...process.env, RATCHET_LOG_LEVEL: 'info', RATCHET_CRASH_AT: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    return child;
  };
  const startWorker = async (): Promise<Worker> => {
    const child = spawnChild([join(repoRoot, 'src/worker/main.ts')]);
    const worker: Worker = { child, pid: child.pid ?? -1, bullmqIds: [], output: '' };
    const ready = new Promise<void>((done, fail) => {
      const timer = setTimeout(
        () => fail(new Error(`worker ${worker.pid} did not start:\n${worker.output}`)),
        60_000,
      );
      const onData = (chunk: Buffer) => {
        worker.output += chunk.toString();
        const line = worker.output.split('\n').find((text) => text.includes('"worker started"'));
        if (line) {
          worker.bullmqIds = (JSON.parse(line) as { bullmq_worker_ids?: string[] }).bullmq_worker_ids ?? [];
          clearTimeout(timer);
          done();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', (chunk: Buffer) => {
        worker.output += chunk.toString();
      });
      child.once('exit', () => {
        clearTimeout(timer);
        fail(new Error(`worker ${worker.pid} exited at start:\n${worker.output}`));
      });
    });
    workers.push(worker);
    report.workerStarts += 1;
    await ready;
    return worker;
  };

  try {
    // The API in a process of its own; runs go in through HTTP.
    const api = spawnChild([join(repoRoot, 'src/cli/main.ts'), 'api']);
    let apiOutput = '';
    api.stdout?.on('data', (chunk: Buffer) => {
      apiOutput += chunk.toString();
    });
    api.stderr?.on('data', (chunk: Buffer) => {
      apiOutput += chunk.toString();
    });
    const base = `http://127.0.0.1:${apiPort}/v1`;
    await until(
      async () => (await fetch(`${base}/agents`).catch(() => undefined))?.ok === true,
      30_000,
      () => `the API:\n${apiOutput}`,
    );
    for (let index = 0; index < options.workers; index += 1) await startWorker();

    // The mix, submitted through the API.
    const submitted: { runId: string; sessionId: string; scenario: Scenario }[] = [];
    for (let index = 0; index < options.runs; index += 1) {
      const scenario = scenarioAgents[index % scenarioAgents.length] as Scenario;
      const body = await postJson(`${base}/runs`, { input: `a task for ${scenario}`, agent: scenario });
      submitted.push({ runId: body.run_id, sessionId: body.session_id, scenario });
    }
    log(`submitted ${submitted.length} runs`);

    const finished = new Set<string>();
    const answered = new Set<string>();
    const deadline = Date.now() + options.timeoutMs;
    let nextKill = Date.now() + options.killEveryMs * (0.5 + next());
    // Early, while most runs are still in flight.
    const restartAt = options.restartRedis
      ? Date.now() + options.killEveryMs * 1.5
      : Number.POSITIVE_INFINITY;
    // The restart always happens when asked for, even on a machine so busy that every run finished first.
    const restartPending = () => options.restartRedis && report.redisRestarts === 0;
    while ((finished.size < submitted.length || restartPending()) && Date.now() < deadline) {
      const now = Date.now();
      if (now >= restartAt && report.redisRestarts === 0 && redis) {
        // Redis dies (SIGKILL) and comes back on its AOF, same port, while runs are in flight.
        redisDownFrom = Date.now();
        await redis.stop();
        await sleep(300);
        redis = await startRedisServer({ appendOnly: true, dir: redisDir, port });
        redisDownUntil = Date.now() + 2_000;
        report.redisRestarts += 1;
        log('redis restarted');
      }
      if (now >= nextKill && workers.length > 0) {
        const victim = workers.splice(Math.floor(next() * workers.length), 1)[0] as Worker;
        const orphaned = await activeJobsOf(client, victim).catch(() => [] as OrphanedJob[]);
        const killedAt = Date.now();
        victim.child.kill('SIGKILL');
        killedPids.add(victim.pid);
        report.kills += 1;
        void recovery(client, orphaned, killedAt).then((ms) => {
          if (ms !== undefined) report.recoveries.push(ms);
        });
        await startWorker();
        nextKill = Date.now() + options.killEveryMs * (0.5 + next());
      }
      for (const run of submitted) {
        if (finished.has(run.runId)) continue;
        const view = await getJson(`${base}/runs/${run.runId}`).catch(() => undefined);
        if (view && ['completed', 'failed', 'cancelled'].includes(view.status)) {
          finished.add(run.runId);
          continue;
        }
        if (run.scenario === 'asker' && !answered.has(run.runId)) {
          const questions = await getJson(`${base}/sessions/${run.sessionId}/questions`).catch(
            () => undefined,
          );
          const question = questions?.questions?.[0] ?? questions?.[0];
          if (question?.id) {
            const response = await fetch(`${base}/sessions/${run.sessionId}/respond`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ question_id: question.id, response: 'blue' }),
            }).catch(() => undefined);
            if (response?.ok || response?.status === 409) answered.add(run.runId);
          }
        }
      }
      await sleep(100);
    }
    report.wallMs = Date.now() - started;
    log(`${finished.size} of ${submitted.length} runs finished after ${report.wallMs} ms`);

    // The oracle: each kind of run once more, without faults, by a worker in this process.
    const reference = await referenceRuns(loaded.path, client, dir);
    const calls = readCalls(join(dir, 'calls.jsonl'));
    for (const run of submitted) {
      const view = await engine.getRun(run.runId);
      if (view?.status === 'completed') report.completed += 1;
      else
        report.failures.push(
          `${run.scenario} ${run.runId}: ${view?.status ?? 'missing'} ${view?.error?.message ?? ''}`,
        );
      const expected = reference.get(run.scenario);
      if (!expected) continue;
      const got = await observe(engine, run.sessionId, run.runId);
      const messages = compare(expected.messages, got.messages);
      const events = compare(expected.events, got.events);
      report.lostMessages += messages.lost;
      report.duplicatedMessages += messages.extra;
      report.lostEvents += events.lost;
      report.duplicatedEvents += events.extra;
      if (messages.lost + messages.extra + events.lost + events.extra > 0)
        report.failures.push(
          `${run.scenario} ${run.runId}: transcript or events differ from a run without faults: ${JSON.stringify(
            {
              messages: difference(expected.messages, got.messages),
              events: difference(expected.events, got.events),
            },
          ).slice(0, 3000)}`,
        );
      report.referenceModelCalls += expected.calls;
    }
    const ours = calls.filter((line) => submitted.some((run) => run.sessionId === line.session_id));
    report.modelCalls = ours.length;
    const byStep = new Map<string, typeof ours>();
    for (const line of ours) {
      const key = `${line.run_id}|${line.iteration}|${line.purpose ?? ''}|${line.position}`;
      byStep.set(key, [...(byStep.get(key) ?? []), line]);
    }
    for (const group of byStep.values()) {
      for (const earlier of group.slice(0, -1)) {
        report.repeatedCalls += 1;
        const at = Date.parse(earlier.time);
        // A repeat is explained when the call's first maker was killed, when it came during the Redis restart,
        // or when its step job was taken over or retried (BullMQ counts both in the job's hash): a worker
        // starved of CPU for longer than a lock or a heartbeat is taken over as if it had died.
        const explained =
          killedPids.has(earlier.pid) ||
          (at >= redisDownFrom - 5_000 && at <= redisDownUntil + 5_000) ||
          (await stepTakenOverOrRetried(client, earlier));
        if (explained) report.explainedRepeats += 1;
        else report.failures.push(`an unexplained repeated model call: ${JSON.stringify(earlier)}`);
      }
    }
    return report;
  } finally {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(children.map((child) => exitOf(child)));
    await engine.close().catch(() => {});
    await closeRedis(client);
    await redis?.stop();
    rmSync(redisDir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether the iteration job of a model call stalled (was taken over) or was attempted more than once. */
async function stepTakenOverOrRetried(
  redis: ReturnType<typeof createRedis>,
  call: CallLine,
): Promise<boolean> {
  const space = { prefix: 'chaos', shards: 1 };
  const job = `${shardPrefix(space, 0)}:${stepQueueName}:${call.run_id}-i${call.iteration}`;
  const [stalled, attempts] = await redis.hmget(job, 'stc', 'atm');
  return Number(stalled ?? 0) > 0 || Number(attempts ?? 0) > 1;
}

interface OrphanedJob {
  jobId: string;
  token: string;
}

/** The step jobs the worker holds: active jobs whose lock token starts with one of its BullMQ worker ids. */
async function activeJobsOf(redis: ReturnType<typeof createRedis>, worker: Worker): Promise<OrphanedJob[]> {
  const prefix = shardPrefix({ prefix: 'chaos', shards: 1 }, 0);
  const ids = await redis.lrange(`${prefix}:${stepQueueName}:active`, 0, -1);
  const held: OrphanedJob[] = [];
  for (const jobId of ids) {
    const token = await redis.get(jobLockKey({ prefix: 'chaos', shards: 1 }, 0, jobId));
    if (token && worker.bullmqIds.some((id) => token.startsWith(`${id}:`))) held.push({ jobId, token });
  }
  return held;
}

/** From the kill until every job the dead worker held is held by another worker or done (ms). */
async function recovery(
  redis: ReturnType<typeof createRedis>,
  jobs: readonly OrphanedJob[],
  killedAt: number,
): Promise<number | undefined> {
  if (jobs.length === 0) return undefined;
  const space = { prefix: 'chaos', shards: 1 };
  const pending = new Set(jobs.map((job) => job.jobId));
  while (pending.size > 0 && Date.now() - killedAt < 120_000) {
    for (const job of jobs) {
      if (!pending.has(job.jobId)) continue;
      const token = await redis.get(jobLockKey(space, 0, job.jobId)).catch(() => job.token);
      const state = await redis
        .zscore(`${shardPrefix(space, 0)}:${stepQueueName}:completed`, job.jobId)
        .catch(() => null);
      if ((token !== null && token !== job.token) || state !== null) pending.delete(job.jobId);
    }
    if (pending.size > 0) await sleep(25);
  }
  return pending.size === 0 ? Date.now() - killedAt : undefined;
}

interface Observed {
  messages: string[];
  events: string[];
  calls: number;
}

/** A session's transcript and events, without what differs between two runs of one kind (ids, times). */
async function observe(
  engine: ReturnType<typeof engineFromConfig>,
  sessionId: string,
  runId: string,
): Promise<Observed> {
  const strip = (text: string) =>
    text
      .replaceAll(runId, 'RUN')
      .replace(/run_[0-9a-z]{16}_[0-9a-z]{10}/g, 'CHILD')
      .replace(/ses_[0-9a-z]{16}/g, 'SES')
      .replace(/"task \d+"|task \d+/g, 'TASK');
  const messages = (await engine.readChat(sessionId)).map((message: Message) =>
    strip(`${message.role}|${message.sender}|${JSON.stringify(message.parts)}`),
  );
  const events = (await engine.readEvents(sessionId, { count: 100_000 })).map((event: RatchetEvent) => {
    const data = { ...(event.data as Record<string, unknown>) };
    for (const key of ['duration_ms', 'created_at', 'message', 'timeout_at', 'question_id', 'retry_in_ms'])
      delete data[key];
    if (data.metadata && typeof data.metadata === 'object')
      data.metadata = { ...(data.metadata as Record<string, unknown>), execution_time_ms: 'T' };
    // Failed attempts (a kill, the Redis restart) are announced: they are not a difference. Nor is a tool call
    // that a kill interrupted and that ran again: its end says so, and is otherwise the same.
    if (event.kind === 'error' || event.kind === 'attempt_retried') return '';
    if (data.interrupted === 'rerun') delete data.interrupted;
    return strip(`${event.kind}|${event.agent}|${JSON.stringify(data)}`);
  });
  return { messages, events: events.filter((text) => text !== ''), calls: 0 };
}

/** Each kind of run once, without faults, on a fresh prefix of the same Redis, by a worker in this process. */
async function referenceRuns(
  configPath: string,
  client: ReturnType<typeof createRedis>,
  dir: string,
): Promise<Map<Scenario, Observed>> {
  const loaded = loadConfig(configPath);
  const config = { ...loaded.config, redis: { ...loaded.config.redis, prefix: 'chaos-reference' } };
  const worker = new RatchetWorker({ loaded: { ...loaded, config }, toolboxes: [], logger: silentLogger() });
  const engine = engineFromConfig({ config, redis: client, logger: silentLogger() });
  const result = new Map<Scenario, Observed>();
  try {
    await worker.start();
    for (const scenario of scenarioAgents) {
      const { runId, sessionId } = await engine.startRun({
        input: `a task for ${scenario}`,
        agent: scenario,
      });
      if (scenario === 'asker') {
        await until(
          async () => (await engine.listQuestions(sessionId)).length > 0,
          30_000,
          () => 'the question',
        );
        const [question] = await engine.listQuestions(sessionId);
        if (question) await engine.respond(sessionId, question.id, 'blue');
      }
      const run = await engine.waitForRun(runId, { timeoutMs: 60_000 });
      if (run.status !== 'completed')
        throw new Error(`reference ${scenario} run ${run.status}: ${run.error?.message}`);
      const observed = await observe(engine, sessionId, runId);
      observed.calls = readCalls(join(dir, 'calls.jsonl')).filter(
        (line) => line.session_id === sessionId,
      ).length;
      result.set(scenario, observed);
    }
  } finally {
    await worker.close(2000);
    await engine.close();
  }
  return result;
}

/** The entries of one multiset missing from the other, both ways (for the failure report). */
function difference(
  expected: readonly string[],
  got: readonly string[],
): { missing: string[]; extra: string[] } {
  const missing = [...expected];
  const extra: string[] = [];
  for (const entry of got) {
    const at = missing.indexOf(entry);
    if (at >= 0) missing.splice(at, 1);
    else extra.push(entry);
  }
  return { missing, extra };
}

/** How many entries of `expected` are missing from `got`, and how many of `got` are extra (multisets). */
function compare(expected: readonly string[], got: readonly string[]): { lost: number; extra: number } {
  const counts = new Map<string, number>();
  for (const entry of expected) counts.set(entry, (counts.get(entry) ?? 0) + 1);
  let extra = 0;
  for (const entry of got) {
    const left = counts.get(entry) ?? 0;
    if (left > 0) counts.set(entry, left - 1);
    else extra += 1;
  }
  const lost = [...counts.values()].reduce((sum, left) => sum + left, 0);
  return { lost, extra };
}

interface CallLine {
  time: string;
  pid: number;
  session_id: string;
  run_id: string;
  iteration: number;
  position: number;
  purpose?: string;
}

function readCalls(path: string): CallLine[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as CallLine);
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await sleep(50);
  }
}

async function postJson(url: string, body: unknown): Promise<{ run_id: string; session_id: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as { run_id: string; session_id: string };
}

// biome-ignore lint/suspicious/noExplicitAny: the API's JSON, read loosely by a test tool
async function getJson(url: string): Promise<any> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url}: ${response.status}`);
  return response.json();
}

function exitOf(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => child.once('exit', () => done()));
}

export function percentileOf(values: readonly number[], fraction: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}

export function formatChaos(report: ChaosReport): string {
  const ms = (value: number | undefined) => (value === undefined ? 'n/a' : `${(value / 1000).toFixed(2)} s`);
  const rows: [string, string][] = [
    ['runs completed', `${report.completed} of ${report.runs}`],
    ['worker SIGKILLs', String(report.kills)],
    ['worker processes started', String(report.workerStarts)],
    ['Redis restarts (SIGKILL, AOF)', String(report.redisRestarts)],
    ['lost messages', String(report.lostMessages)],
    ['duplicated messages', String(report.duplicatedMessages)],
    ['lost events', String(report.lostEvents)],
    ['duplicated events', String(report.duplicatedEvents)],
    ['model calls (without faults)', `${report.modelCalls} (${report.referenceModelCalls})`],
    [
      'repeated model calls (explained by a kill, the restart or a takeover)',
      `${report.repeatedCalls} (${report.explainedRepeats})`,
    ],
    [
      'recovery after a kill, p50 / p95',
      `${ms(percentileOf(report.recoveries, 0.5))} / ${ms(percentileOf(report.recoveries, 0.95))} (${report.recoveries.length} kills held steps)`,
    ],
    ['wall time', ms(report.wallMs)],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n');
}
