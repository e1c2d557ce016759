/**
 * `npm run bench:latency`: Ratchet's step time against the raw BullMQ chain's when every round trip to Redis
 * costs a network hop (issue 37). A TCP proxy on loopback (bench/latency-proxy.ts, its own process) adds
 * BENCH_LATENCY_MS (0.5) each way to everything both send Redis; each side is measured straight to Redis and
 * through the proxy, one chain or run at a time (BENCH_RUNS, 20, of BENCH_ITERATIONS, 10, iterations), so the
 * added time shows how many round trips wait on one another per step.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DEFAULT_REDIS_URL } from '../src/config/index.js';
import { readyLine } from './child-ready.js';
import { freePort } from './free-port.js';
import { measureRatchetRuns } from './ratchet-runs.js';
import { measureRawChains } from './raw-chain.js';
import { summarize } from './stats.js';

const url = process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
const delayMs = Number(process.env.BENCH_LATENCY_MS ?? 0.5);
const runs = Number(process.env.BENCH_RUNS ?? 20);
const iterations = Number(process.env.BENCH_ITERATIONS ?? 10);
const proxyEntry = fileURLToPath(new URL('./latency-proxy.ts', import.meta.url));

/** p50 per job (one queue hop and one job's work) of the raw chain and of Ratchet's tool loop, at `target`. */
async function measure(target: string): Promise<{ raw: number; ratchet: number }> {
  const size = { parallel: 1, units: runs, warmup: 3, concurrency: 50 };
  const raw = await measureRawChains({
    url: target,
    ...size,
    length: 2 * iterations - 1,
    jobOptions: { attempts: 8, removeOnComplete: { age: 86_400 }, removeOnFail: { age: 86_400 } },
    lockDurationMs: 10_000,
    stalledIntervalMs: 5_000,
  });
  const ratchet = await measureRatchetRuns({ url: target, ...size, iterations });
  return { raw: summarize(raw.stepGaps).p50, ratchet: summarize(ratchet.stepGaps).p50 };
}

const port = await freePort();
const proxy = spawn(process.execPath, ['--import', 'tsx', proxyEntry], {
  env: {
    ...process.env,
    PROXY_PORT: String(port),
    TARGET_PORT: new URL(url).port || '6379',
    DELAY_MS: String(delayMs),
  },
  stdio: ['pipe', 'pipe', 'inherit'],
});
try {
  await readyLine(proxy, 30_000, 'the latency proxy');
  const direct = await measure(url);
  const delayed = await measure(`redis://127.0.0.1:${port}`);
  const line = (label: string, side: { raw: number; ratchet: number }) =>
    `  ${label.padEnd(34)} raw chain ${side.raw.toFixed(2)} ms, Ratchet ${side.ratchet.toFixed(2)} ms ` +
    `(${(side.ratchet / side.raw).toFixed(2)}×)`;
  console.log(
    `Latency: p50 per job, one ${2 * iterations - 1}-job chain or ${iterations}-iteration run at a time (${runs} each)`,
  );
  console.log(line('straight to Redis', direct));
  console.log(line(`through the proxy, +${delayMs} ms each way`, delayed));
  const hop = 2 * delayMs;
  console.log(
    `  added per job: raw chain ${(delayed.raw - direct.raw).toFixed(2)} ms ` +
      `(${((delayed.raw - direct.raw) / hop).toFixed(1)} round trips in series), Ratchet ` +
      `${(delayed.ratchet - direct.ratchet).toFixed(2)} ms (${((delayed.ratchet - direct.ratchet) / hop).toFixed(1)})`,
  );
} finally {
  proxy.kill('SIGTERM');
}
