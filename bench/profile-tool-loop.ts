// Profiling aid: only the Ratchet tool loop, BENCH_PARALLEL runs in flight (50), BENCH_RUNS of them (400).
// `node --cpu-prof --import tsx bench/profile-tool-loop.ts`; for an A/B, alternate two checkouts run by run.
import { measureRatchetRuns } from './ratchet-runs.js';
import { telemetrySink } from './telemetry-sink.js';

const result = await measureRatchetRuns({
  url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  iterations: 10,
  parallel: Number(process.env.BENCH_PARALLEL ?? 50),
  units: Number(process.env.BENCH_RUNS ?? 400),
  warmup: 50,
  concurrency: 50,
});
const perJob = (ms: number) => `${((ms * 1000) / result.jobs).toFixed(0)} µs/job`;
console.log(
  `${(result.jobs / (result.wallMs / 1000)).toFixed(0)} jobs/s, CPU: this process ${perJob(result.cpu.processMs)},`,
  `Redis ${perJob(result.cpu.redisMs)}`,
);
// BENCH_TELEMETRY=on: the span receiver's server would keep the process alive (and --cpu-prof never write).
await (await telemetrySink())?.close();
