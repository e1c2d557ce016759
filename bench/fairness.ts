import { type ChildProcess, spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { silentLogger } from '../src/log/index.js';
import { closeRedis, createRedis } from '../src/redis/connection.js';
import { createBenchEngine } from './bench-engine.js';
import { readyLine } from './child-ready.js';
import { type FairnessMode, type FairnessOptions, fairnessConfig } from './fairness-config.js';
import { registerListenedScripted } from './marked-model.js';
import type { Target } from './report.js';
import { deleteScratchKeys, scratchPrefix } from './scratch-keys.js';
import { runInSlots } from './slots.js';
import { percentile } from './stats.js';
import type { StepMarks } from './step-marks.js';

export type { FairnessMode, FairnessOptions };

const fixture = fileURLToPath(new URL('./fixtures/fairness-worker.ts', import.meta.url));

/**
 * F. Fairness (issue 35, decisions 0038 and 0048): tenant A submits `heavyRuns` one-iteration runs, then
 * tenant B submits `lightRuns`; B's wait from its submission until its run's model call starts, against the
 * same B runs on an idle deployment, and the share of model calls each tenant got while both had work (from
 * B's first submission until B's last model call answered). Measured with fair admission off (first come,
 * first served, as before) and on (`admission.max_active_runs` = the worker's concurrency, equal weights).
 * This process submits, as a client of the API would; the worker is a process of its own (as in a
 * deployment), which prints when each model call starts and answers, on the same clock (ms since the epoch).
 * Warmed up first by 20 runs of a third tenant in every mode. A's runs left when B is done are not waited
 * for: their keys are deleted.
 */

export interface FairnessResult {
  mode: FairnessMode;
  /** B's waits, submission → model call start, ms. */
  lightWaits: number[];
  /**
   * Model calls (started) of A and of B while both had work: from B's first submission until B's last model
   * call answered (B's runs are one call each: B has work until then).
   */
  calls: { heavy: number; light: number };
  /** The same from B's first run accepted on (its `startRun` answered: the run exists and asked for admission). */
  callsOnceAccepted: { heavy: number; light: number };
  /** The same from B's first model call on (A's runs in flight when B came are left out). */
  callsOnceServed: { heavy: number; light: number };
  /** The same window ending when B's last model call started (the figure reported before decision 0048). */
  callsUntilLastStart: { heavy: number; light: number };
}

/** The worker process: its marks (start and end of each call) read into `marks` and `ends`, on this clock. */
function startWorker(
  options: FairnessOptions,
  mode: FairnessMode,
  prefix: string,
  marks: StepMarks,
  ends: StepMarks,
): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
    env: { ...process.env, BENCH_PREFIX: prefix, BENCH_FAIRNESS: JSON.stringify({ options, mode }) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const [what, runId = '', at = '0'] = line.split(' ');
      if (what !== 'start' && what !== 'end') continue;
      const list = (what === 'start' ? marks : ends).get(runId) ?? [];
      list.push(Number(at) - performance.timeOrigin);
      (what === 'start' ? marks : ends).set(runId, list);
    }
  });
  return child;
}

export async function measureFairness(options: FairnessOptions, mode: FairnessMode): Promise<FairnessResult> {
  const prefix = scratchPrefix();
  const marks: StepMarks = new Map();
  const ends: StepMarks = new Map();
  // The config names the marked kind: registered here too, though this process makes no model call.
  registerListenedScripted({ started: () => undefined });
  const loaded = fairnessConfig(options, mode, prefix);
  const logger = silentLogger();
  const redis = createRedis({ url: options.url, logger, name: 'bench-fairness' });
  const engine = createBenchEngine(loaded, redis);
  const heavy = new Set<string>();
  const submitted = new Map<string, number>();
  const worker = startWorker(options, mode, prefix, marks, ends);
  try {
    await readyLine(worker, 60_000, 'the fairness worker');
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
    let accepted = Number.POSITIVE_INFINITY;
    await Promise.all(
      Array.from({ length: options.lightRuns }, async (_unused, index) => {
        const before = performance.now();
        const { runId } = await engine.startRun({ input: `b ${index}`, tenant: 'b' });
        submitted.set(runId, before);
        accepted = Math.min(accepted, performance.now());
        light.push(runId);
      }),
    );
    const deadline = performance.now() + 120_000;
    while (light.some((runId) => !ends.has(runId))) {
      if (performance.now() > deadline)
        throw new Error(`fairness (${mode}): B's runs did not start in 120 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const lightWaits = light.map((runId) => (marks.get(runId)?.[0] ?? 0) - (submitted.get(runId) ?? 0));
    const firstCalls = light.map((runId) => marks.get(runId)?.[0] ?? 0);
    const lastStart = Math.max(...firstCalls);
    const lightEnd = Math.max(...light.map((runId) => ends.get(runId)?.[0] ?? 0));
    const count = (from: number, until = lightEnd) => {
      const calls = { heavy: 0, light: 0 };
      for (const [runId, times] of marks) {
        const during = times.filter((time) => time >= from && time <= until).length;
        if (heavy.has(runId)) calls.heavy += during;
        else calls.light += during;
      }
      return calls;
    };
    return {
      mode,
      lightWaits,
      calls: count(lightStart),
      callsOnceAccepted: count(accepted),
      callsOnceServed: count(Math.min(...firstCalls)),
      callsUntilLastStart: count(lightStart, lastStart),
    };
  } finally {
    if (worker.exitCode === null && worker.signalCode === null) {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.stdin?.end();
      await exited;
    }
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
    "  B share: model calls started by B / all, from B's submission until B's last call answered; the same from B's",
    "  first run accepted, from B's first call, and (as reported before decision 0048) until B's last call started",
    `${'fair admission'.padEnd(24)}${'B p50 ms'.padStart(10)}${'B p95 ms'.padStart(10)}${'p95 / idle'.padStart(12)}` +
      `${'B share'.padStart(9)}${'accepted'.padStart(10)}${'1st call'.padStart(10)}${'old end'.padStart(9)}`,
  ];
  for (const result of results) {
    const sorted = [...result.lightWaits].sort((a, b) => a - b);
    const shares = [
      result.calls,
      result.callsOnceAccepted,
      result.callsOnceServed,
      result.callsUntilLastStart,
    ].map((calls) => (result.mode === 'idle' ? '-' : percent(shareOf(calls))));
    const ratio = result.mode === 'idle' ? '1.0×' : `${(p95(result.lightWaits) / idleP95).toFixed(1)}×`;
    lines.push(
      `${label(result.mode).padEnd(24)}${percentile(sorted, 0.5).toFixed(0).padStart(10)}${p95(result.lightWaits).toFixed(0).padStart(10)}${ratio.padStart(12)}${shares[0]?.padStart(9)}${shares[1]?.padStart(10)}${shares[2]?.padStart(10)}${shares[3]?.padStart(9)}`,
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

/** Fair admission on: B's p95 wait ≤ 2× idle, and B's share of calls within 10% of its weight (½). */
export function fairnessTargets(results: readonly FairnessResult[]): Target[] {
  const on = results.find((result) => result.mode === 'on');
  if (!on) return [];
  const ratio = p95(on.lightWaits) / idleP95Of(results);
  const share = shareOf(on.calls);
  return [
    {
      label: "fairness: B's p95 wait before its model call vs idle",
      measured: `${ratio.toFixed(1)}×`,
      limit: '≤ 2×',
      pass: ratio <= 2,
    },
    {
      label: "fairness: B's share of model calls while both had work",
      measured: `${percent(share)} (from B's first run accepted: ${percent(shareOf(on.callsOnceAccepted))}, from its first call: ${percent(shareOf(on.callsOnceServed))})`,
      limit: '50% ± 10%',
      pass: Math.abs(share - 0.5) <= 0.1,
    },
  ];
}
