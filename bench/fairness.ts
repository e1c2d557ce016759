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
 * for: their keys are deleted. The idle deployment is measured twice: with fair admission on (the deployment
 * of `on`, without A: the target's denominator, decision 0053) and off (as before, printed beside it).
 */

export interface FairnessResult {
  mode: FairnessMode;
  /** The round it was measured in (measureFairnessRounds): an `on` is compared with the idle of its round. */
  round: number;
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

/**
 * Section F in interleaved rounds: off once, then `rounds` times idle, idle-fair and on, one after the other.
 * B's p95 on a shared machine swings with the load of the moment (the idle p95 of 20 runs alone, 18–152 ms
 * from run to run), so one idle figure is a noisy denominator: each `on` is compared with the idles measured
 * beside it, and the targets take the median over the rounds.
 */
export async function measureFairnessRounds(
  options: FairnessOptions,
  rounds: number,
): Promise<FairnessResult[]> {
  const results = [await measureFairness(options, 'off', 0)];
  for (let round = 1; round <= rounds; round += 1) {
    for (const mode of ['idle', 'idle-fair', 'on'] as const)
      results.push(await measureFairness(options, mode, round));
  }
  return results;
}

export async function measureFairness(
  options: FairnessOptions,
  mode: FairnessMode,
  round = 0,
): Promise<FairnessResult> {
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
    if (mode === 'off' || mode === 'on') {
      await runInSlots(options.heavyRuns, 20, async (index) => {
        const { runId } = await engine.startRun({ input: `a ${index}`, tenant: 'a' });
        heavy.add(runId);
      });
    }
    if (options.lightDelayMs) await new Promise((resolve) => setTimeout(resolve, options.lightDelayMs));
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
      round,
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

/** The section's table: every measurement, then the medians the targets take. */
export function formatFairness(results: readonly FairnessResult[], options: FairnessOptions): string {
  const lines = [
    `F. fairness: tenant A submits ${options.heavyRuns} runs, then tenant B ${options.lightRuns}; 1-iteration runs, ` +
      `model ${options.modelDelayMs} ms, worker concurrency ${options.concurrency}; fair admission on: ` +
      `admission.max_active_runs ${options.concurrency}, equal weights` +
      (options.recheckS === undefined ? '' : `, admission.recheck_s ${options.recheckS}`) +
      (options.lightDelayMs ? `; B submits ${options.lightDelayMs} ms after A's last submission` : ''),
    "  B share: model calls started by B / all, from B's submission until B's last call answered; the same from B's",
    "  first run accepted, from B's first call, and (as reported before decision 0048) until B's last call started",
    "  p95 / idle: B's p95 against B alone on the same deployment (fair admission on) measured in the same round;",
    '  in brackets, against B alone with fair admission off (no admission at all)',
    `${'fair admission'.padEnd(30)}${'B p50 ms'.padStart(10)}${'B p95 ms'.padStart(10)}${'p95 / idle'.padStart(18)}` +
      `${'B share'.padStart(9)}${'accepted'.padStart(10)}${'1st call'.padStart(10)}${'old end'.padStart(9)}`,
  ];
  for (const result of results) {
    const sorted = [...result.lightWaits].sort((a, b) => a - b);
    const loaded = result.mode === 'on' || result.mode === 'off';
    const shares = [
      result.calls,
      result.callsOnceAccepted,
      result.callsOnceServed,
      result.callsUntilLastStart,
    ].map((calls) => (loaded ? percent(shareOf(calls)) : '-'));
    const ratios = ratiosOf(results, result);
    const ratio = loaded ? `${ratios.fair.toFixed(1)}× (${ratios.plain.toFixed(1)}×)` : '-';
    lines.push(
      `${label(result).padEnd(30)}${percentile(sorted, 0.5).toFixed(0).padStart(10)}${p95(result.lightWaits).toFixed(0).padStart(10)}${ratio.padStart(18)}${shares[0]?.padStart(9)}${shares[1]?.padStart(10)}${shares[2]?.padStart(10)}${shares[3]?.padStart(9)}`,
    );
  }
  const on = results.filter((result) => result.mode === 'on');
  if (on.length > 0) {
    const fair = on.map((result) => ratiosOf(results, result).fair);
    const plain = on.map((result) => ratiosOf(results, result).plain);
    lines.push(
      `  on, median of ${on.length} rounds: p95 / idle ${median(fair).toFixed(1)}× (${median(plain).toFixed(1)}×), ` +
        `B share ${percent(median(on.map((result) => shareOf(result.calls))))}; rounds within the aims: ` +
        `ratio ≤ 2× ${fair.filter((ratio) => ratio <= 2).length}/${on.length} ` +
        `(${plain.filter((ratio) => ratio <= 2).length}/${on.length}), share 45–55% ` +
        `${on.filter((result) => shareWithin(shareOf(result.calls))).length}/${on.length} ` +
        `(40–60%: ${on.filter((result) => shareWithin(shareOf(result.calls), 0.2)).length}/${on.length})`,
    );
  }
  return lines.join('\n');
}

/**
 * B's p95 against the idles of the result's round: `fair` B alone on the same deployment (fair admission on),
 * `plain` B alone with fair admission off; `off`, measured once before the rounds, takes round 1's idles.
 */
function ratiosOf(
  results: readonly FairnessResult[],
  result: FairnessResult,
): { fair: number; plain: number } {
  const round = result.round === 0 ? 1 : result.round;
  const idleOf = (mode: FairnessMode) => {
    const idle = results.find((other) => other.mode === mode && other.round === round);
    return idle ? p95(idle.lightWaits) : Number.NaN;
  };
  const own = p95(result.lightWaits);
  return { fair: own / idleOf('idle-fair'), plain: own / idleOf('idle') };
}

/** B's share of the model calls (its weight is half of the total: equal weights). */
export function shareOf(calls: { heavy: number; light: number }): number {
  const total = calls.heavy + calls.light;
  return total === 0 ? Number.NaN : calls.light / total;
}

/**
 * "Within 10% of their weights", read as 10% of B's weight share (½): 45–55%. Reported before as ½ ± 0.1
 * (40–60%), which the summary line still counts beside it.
 */
function shareWithin(share: number, tolerance = 0.1): boolean {
  return Math.abs(share - 0.5) <= 0.5 * tolerance;
}

function percent(fraction: number): string {
  return `${(100 * fraction).toFixed(0)}%`;
}

function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

function label(result: FairnessResult): string {
  const round = result.round === 0 ? '' : ` #${result.round}`;
  switch (result.mode) {
    case 'idle':
      return `idle, admission off (B)${round}`;
    case 'idle-fair':
      return `idle, admission on (B)${round}`;
    case 'off':
      return `off (today)${round}`;
    case 'on':
      return `on${round}`;
  }
}

export function p95(samples: readonly number[]): number {
  return percentile(
    [...samples].sort((a, b) => a - b),
    0.95,
  );
}

/**
 * Fair admission on, the median over the rounds: B's p95 wait ≤ 2× B alone on the same deployment, and B's
 * share of calls within 10% of its weight (½).
 */
export function fairnessTargets(results: readonly FairnessResult[]): Target[] {
  const on = results.filter((result) => result.mode === 'on');
  if (on.length === 0) return [];
  const ratio = median(on.map((result) => ratiosOf(results, result).fair));
  const plain = median(on.map((result) => ratiosOf(results, result).plain));
  const share = median(on.map((result) => shareOf(result.calls)));
  const accepted = median(on.map((result) => shareOf(result.callsOnceAccepted)));
  const served = median(on.map((result) => shareOf(result.callsOnceServed)));
  return [
    {
      label: `fairness: B's p95 wait before its model call vs idle (median of ${on.length} rounds)`,
      measured: `${ratio.toFixed(1)}× (vs idle with admission off: ${plain.toFixed(1)}×)`,
      limit: '≤ 2×',
      pass: ratio <= 2,
    },
    {
      label: `fairness: B's share of model calls while both had work (median of ${on.length} rounds)`,
      measured: `${percent(share)} (from B's first run accepted: ${percent(accepted)}, from its first call: ${percent(served)})`,
      limit: '45–55% (½ ± 10% of ½)',
      pass: shareWithin(share),
    },
  ];
}
