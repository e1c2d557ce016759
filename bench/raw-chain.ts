import { performance } from 'node:perf_hooks';
import { type JobsOptions, Queue, Worker } from 'bullmq';
import { startCpuMeter } from './cpu-meter.js';
import { JobCompletions } from './job-completions.js';
import type { ScenarioResult, ScenarioSize } from './scenario.js';
import { deleteScratchKeys, scratchPrefix } from './scratch-keys.js';
import { runInSlots } from './slots.js';
import { gaps } from './stats.js';

const queueName = 'chain';

interface LinkData {
  chain: number;
  link: number;
}

export interface RawChainOptions extends ScenarioSize {
  url: string;
  /** Jobs per chain; 1 makes each unit a single job. */
  length: number;
  /** The options Ratchet gives its step jobs, so both sides do the same bookkeeping on completion. */
  jobOptions: JobsOptions;
  lockDurationMs: number;
  stalledIntervalMs: number;
}

/**
 * Plain BullMQ, no Ratchet: each job of a chain, when processed, adds the next (`chain-<c>-<k>`) until the
 * chain has `length` jobs. A mark is taken when each job's processing starts.
 */
export async function measureRawChains(options: RawChainOptions): Promise<ScenarioResult> {
  const prefix = scratchPrefix();
  const connection = { url: options.url, maxRetriesPerRequest: null };
  const queue = new Queue<LinkData>(queueName, { connection, prefix });
  const marks = new Map<number, number[]>();
  const jobId = (chain: number, link: number) => `chain-${chain}-${link}`;
  const worker = new Worker<LinkData>(
    queueName,
    async (job) => {
      const { chain, link } = job.data;
      marks.get(chain)?.push(performance.now());
      if (link < options.length) {
        const next = { chain, link: link + 1 };
        await queue.add('link', next, { ...options.jobOptions, jobId: jobId(chain, next.link) });
      }
    },
    {
      connection,
      prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
    },
  );
  worker.on('error', () => {});
  const completions = await JobCompletions.open({ url: options.url, prefix, queueName });
  const latencies = new Map<number, number>();
  const runChain = async (chain: number): Promise<void> => {
    const start = performance.now();
    marks.set(chain, [start]);
    await queue.add('link', { chain, link: 1 }, { ...options.jobOptions, jobId: jobId(chain, 1) });
    const end = await completions.wait(jobId(chain, options.length), 60_000);
    latencies.set(chain, end - start);
  };
  try {
    await worker.waitUntilReady();
    await runInSlots(options.warmup, options.parallel, (index) => runChain(-1 - index));
    const stopCpuMeter = await startCpuMeter(options.url);
    const started = performance.now();
    await runInSlots(options.units, options.parallel, runChain);
    const wallMs = performance.now() - started;
    const cpu = await stopCpuMeter();
    const measured = Array.from({ length: options.units }, (_unused, chain) => chain);
    return {
      units: options.units,
      jobs: options.units * options.length,
      wallMs,
      cpu,
      unitLatencies: measured.map((chain) => latencies.get(chain) ?? Number.NaN),
      stepGaps: measured.flatMap((chain) => gaps(marks.get(chain) ?? [])),
      iterationGaps: [],
    };
  } finally {
    await worker.close();
    await completions.close();
    await queue.close();
    await deleteScratchKeys(options.url, prefix);
  }
}
