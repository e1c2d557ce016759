import type { ScenarioResult } from './scenario.js';
import { type Summary, summarize } from './stats.js';

export interface Row {
  label: string;
  parallel: number;
  units: number;
  jobs: number;
  latency: Summary;
  rate: number;
  rateUnit: string;
  /** CPU microseconds per job: this process, and the Redis server. */
  processCpuPerJob: number;
  redisCpuPerJob: number;
}

export interface Target {
  label: string;
  /** "ratchet 3.1 ms / raw 1.2 ms = 2.6×", or whatever states the measured value. */
  measured: string;
  limit: string;
  pass: boolean;
}

export function rowOf(
  label: string,
  parallel: number,
  result: ScenarioResult,
  samples: readonly number[],
  rate: { count: number; unit: string },
): Row {
  return {
    label,
    parallel,
    units: result.units,
    jobs: result.jobs,
    latency: summarize(samples),
    rate: rate.count / (result.wallMs / 1000),
    rateUnit: rate.unit,
    processCpuPerJob: (result.cpu.processMs * 1000) / result.jobs,
    redisCpuPerJob: (result.cpu.redisMs * 1000) / result.jobs,
  };
}

const columns = [
  { title: 'in flight', width: 9 },
  { title: 'units', width: 7 },
  { title: 'jobs', width: 7 },
  { title: 'p50 ms', width: 8 },
  { title: 'p99 ms', width: 8 },
  { title: 'mean ms', width: 8 },
  { title: 'rate', width: 18 },
  { title: 'cpu µs/job: node', width: 17 },
  { title: 'redis', width: 6 },
];

export function formatRows(title: string, rows: readonly Row[]): string {
  const labelWidth = Math.max(title.length, ...rows.map((row) => row.label.length)) + 2;
  const header =
    title.padEnd(labelWidth) + columns.map((column) => column.title.padStart(column.width)).join(' ');
  const lines = rows.map((row) => {
    const cells = [
      String(row.parallel),
      String(row.units),
      String(row.jobs),
      milliseconds(row.latency.p50),
      milliseconds(row.latency.p99),
      milliseconds(row.latency.mean),
      `${row.rate.toFixed(0)} ${row.rateUnit}`,
      row.processCpuPerJob.toFixed(0),
      row.redisCpuPerJob.toFixed(0),
    ];
    return (
      `  ${row.label}`.padEnd(labelWidth) +
      cells.map((cell, index) => cell.padStart(columns[index]?.width ?? 0)).join(' ')
    );
  });
  return [header, ...lines].join('\n');
}

export function formatTargets(targets: readonly Target[]): string {
  const labelWidth = Math.max(...targets.map((target) => target.label.length)) + 2;
  const measuredWidth = Math.max(...targets.map((target) => target.measured.length)) + 2;
  const lines = targets.map(
    (target) =>
      `  ${target.label.padEnd(labelWidth)}${target.measured.padEnd(measuredWidth)}${target.limit.padEnd(10)}${target.pass ? 'PASS' : 'FAIL'}`,
  );
  return ['targets', ...lines].join('\n');
}

/** Ratchet's p50 over raw's: at most `limit` times. */
export function latencyTarget(label: string, ratchet: Row, raw: Row, limit: number): Target {
  const ratio = ratchet.latency.p50 / raw.latency.p50;
  return {
    label,
    measured: `ratchet ${milliseconds(ratchet.latency.p50)} ms / raw ${milliseconds(raw.latency.p50)} ms = ${ratio.toFixed(2)}×`,
    limit: `≤ ${limit}×`,
    pass: ratio <= limit,
  };
}

/** Ratchet's rate over raw's: at least `limit`. */
export function throughputTarget(label: string, ratchet: Row, raw: Row, limit: number): Target {
  const ratio = ratchet.rate / raw.rate;
  return {
    label,
    measured: `ratchet ${ratchet.rate.toFixed(0)} / raw ${raw.rate.toFixed(0)} ${raw.rateUnit} = ${ratio.toFixed(2)}`,
    limit: `≥ ${limit.toFixed(2)}`,
    pass: ratio >= limit,
  };
}

export function milliseconds(value: number): string {
  return Number.isNaN(value) ? '-' : value.toFixed(2);
}
