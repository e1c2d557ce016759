/** `npm run bench:takeover`: section C of `npm run bench` alone (BENCH_TAKEOVERS kills, default 10). */
import { DEFAULT_REDIS_URL } from '../src/config/index.js';
import { measureTakeover, type TakeoverResult } from './takeover.js';
import { formatTakeovers, takeoverLimitMs, takeoverTarget } from './takeover-report.js';

const url = process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
const count = Number(process.env.BENCH_TAKEOVERS ?? 10);
const results: TakeoverResult[] = [];
for (let index = 0; index < count; index += 1) results.push(await measureTakeover(url, index / count));
console.log(formatTakeovers(results));
const target = takeoverTarget(results, takeoverLimitMs);
console.log(`${target.label}: ${target.measured} (${target.limit}) ${target.pass ? 'PASS' : 'FAIL'}`);
