import { performance } from 'node:perf_hooks';
import { silentLogger } from '../src/log/index.js';
import { closeRedis, createRedis } from '../src/redis/connection.js';
import { RatchetWorker } from '../src/worker/index.js';
import { benchConfig } from './bench-config.js';
import { createBenchEngine } from './bench-engine.js';
import { markedScriptedKind, registerMarkedScripted } from './marked-model.js';
import { deleteScratchKeys, scratchPrefix } from './scratch-keys.js';
import { runInSlots } from './slots.js';
import { percentile } from './stats.js';
import type { StepMarks } from './step-marks.js';

/**
 * F. Fairness (issue 35, decision 0038): tenant A submits `heavyRuns` one-iteration runs, then tenant B
 * submits `lightRuns`; B's wait from its submission until its run's model call starts, against the same B
 * runs on an idle deployment, and the share of model calls each tenant got while both had work (from B's
 * first submission until B's last model call). Measured with fair admission off (first come, first served,
 * as before) and on (`admission.max_active_runs` = the worker's concurrency, equal weights), in one process
 * against one in-process worker, warmed up first by 20 runs of a third tenant in every mode. A's runs left
 * when B is done are not waited for: their keys are deleted.
 */

export type FairnessMode = 'idle' | 'off' | 'on';

export interface FairnessOptions {
  url: string;
  heavyRuns: number;
  lightRuns: number;
  concurrency: number;
  /** The scripted model's delay per call: runs hold a worker slot this long, like a (fast) model. */
  modelDelayMs: number;
}

export interface FairnessResult {
  mode: FairnessMode;
  /** B's waits, submission → model call start, ms. */
  lightWaits: number[];
  /** Model calls of A and of B while both had work: from B's first submission until B's last model call. */
  calls: { heavy: number; light: number };
  /** The same from B's first model call on (A's runs in flight when B came are left out). */
  callsOnceServed: { heavy: number; light: number };
}

export async function measureFairness(options: FairnessOptions, mode: FairnessMode): Promise<FairnessResult> {
  const prefix = scratchPrefix();
  const marks: StepMarks = new Map();
  registerMarkedScripted(marks);
  const loaded = benchConfig({
    url: options.url,
    prefix,
    providerKind: markedScriptedKind,
    replies: [{ text: 'done', delay_ms: options.modelDelayMs }],
    toolboxes: [],
    maxIterations: 1,
    concurrency: options.concurrency,
    sections:
      mode === 'on'
        ? {
            admission: { max_active_runs: options.concurrency },
            tenants: { a: { weight: 1 }, b: { weight: 1 } },
          }
        : {},
  });
  const logger = silentLogger();
  const worker = new RatchetWorker({ loaded, toolboxes: [], logger });
  const redis = createRedis({ url: options.url, logger, name: 'bench-fairness' });
  const engine = createBenchEngine(loaded, redis);
  const heavy = new Set<string>();
  const submitted = new Map<string, number>();
  try {
    await worker.start();
    // A warm worker in every mode (the first runs of a fresh worker are slower): 20 runs of a third tenant.
    const warmup = await Promise.all(
      Array.from({ length: 20 }, (_unused, index) =>
        engine.startRun({ input: `w ${index}`, tenant: 'warmup' }),
      ),
    );
    for (const { runId } of warmup) await engine.waitForRun(runId, { timeoutMs: 60_000 });
    marks.clear();
    if (mode !== 'idle') {
      await runInSlots(options.heavyRuns, 20, async (index) => {
        const { runId } = await engine.startRun({ input: `a ${index}`, tenant: 'a' });
        heavy.add(runId);
      });
    }
    const lightStart = performance.now();
    const light: string[] = [];
    await Promise.all(
      Array.from({ length: options.lightRuns }, async (_unused, index) => {
        const before = performance.now();
        const { runId } = await engine.startRun({ input: `b ${index}`, tenant: 'b' });
        submitted.set(runId, before);
        light.push(runId);
      }),
    );
    const deadline = performance.now() + 120_000;
    while (light.some((runId) => !marks.has(runId))) {
      if (performance.now() > deadline)
        throw new Error(`fairness (${mode}): B's runs did not start in 120 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const lightWaits = light.map((runId) => (marks.get(runId)?.[0] ?? 0) - (submitted.get(runId) ?? 0));
    const firstCalls = light.map((runId) => marks.get(runId)?.[0] ?? 0);
    const lightEnd = Math.max(...firstCalls);
    const count = (from: number) => {
      const calls = { heavy: 0, light: 0 };
      for (const [runId, times] of marks) {
        const during = times.filter((time) => time >= from && time <= lightEnd).length;
        if (heavy.has(runId)) calls.heavy += during;
        else calls.light += during;
      }
      return calls;
    };
    return { mode, lightWaits, calls: count(lightStart), callsOnceServed: count(Math.min(...firstCalls)) };
  } finally {
    await worker.close(5_000);
    await engine.close();
    await closeRedis(redis);
    await deleteScratchKeys(options.url, prefix);
  }
}

/** The section's table. */
export function formatFairness(results: readonly FairnessResult[], options: FairnessOptions): string {
  const idleP95 = idleP95Of(results);
  const lines = [
    `F. fairness: tenant A submits ${options.heavyRuns} runs, then tenant B ${options.lightRuns}; 1-iteration runs, ` +
      `model ${options.modelDelayMs} ms, worker concurrency ${options.concurrency}; fair admission on: ` +
      `admission.max_active_runs ${options.concurrency}, equal weights`,
    "  B share of calls: model calls of B / all, from B's submission (and from B's first call) until B's last first call",
    `${'fair admission'.padEnd(24)}${'B p50 ms'.padStart(10)}${'B p95 ms'.padStart(10)}${'p95 / idle'.padStart(12)}${'B share of calls'.padStart(22)}`,
  ];
  for (const result of results) {
    const sorted = [...result.lightWaits].sort((a, b) => a - b);
    const share =
      result.mode === 'idle'
        ? '-'
        : `${percent(shareOf(result.calls))} (${percent(shareOf(result.callsOnceServed))})`;
    const ratio = result.mode === 'idle' ? '1.0×' : `${(p95(result.lightWaits) / idleP95).toFixed(1)}×`;
    lines.push(
      `${label(result.mode).padEnd(24)}${percentile(sorted, 0.5).toFixed(0).padStart(10)}${p95(result.lightWaits).toFixed(0).padStart(10)}${ratio.padStart(12)}${share.padStart(22)}`,
    );
  }
  return lines.join('\n');
}

/** B's share of the model calls (its weight is half of the total: equal weights). */
export function shareOf(calls: { heavy: number; light: number }): number {
  const total = calls.heavy + calls.light;
  return total === 0 ? Number.NaN : calls.light / total;
}

function percent(fraction: number): string {
  return `${(100 * fraction).toFixed(0)}%`;
}

export function idleP95Of(results: readonly FairnessResult[]): number {
  const idle = results.find((result) => result.mode === 'idle');
  return idle ? p95(idle.lightWaits) : Number.NaN;
}

function label(mode: FairnessMode): string {
  return mode === 'idle' ? 'idle deployment (B only)' : mode === 'off' ? 'off (today)' : 'on';
}

export function p95(samples: readonly number[]): number {
  return percentile(
    [...samples].sort((a, b) => a - b),
    0.95,
  );
}
