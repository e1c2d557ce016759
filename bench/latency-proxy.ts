/**
 * A delaying TCP proxy in a process of its own (`bench/latency.ts` starts it), so the spin that keeps its
 * sub-millisecond delays exact takes no time from the measured process. Env: PROXY_PORT, TARGET_PORT,
 * DELAY_MS. Prints `ready` once it listens; exits when its stdin closes, so it never outlives the bench.
 */
import { TcpProxy } from './tcp-proxy.js';

const port = Number(process.env.PROXY_PORT);
const targetPort = Number(process.env.TARGET_PORT);
const delayMs = Number(process.env.DELAY_MS);
if (!(port > 0 && targetPort > 0 && delayMs >= 0)) {
  throw new Error('PROXY_PORT, TARGET_PORT (ports) and DELAY_MS (≥ 0) must be set');
}
await TcpProxy.start({ target: { host: '127.0.0.1', port: targetPort }, delayMs, port });
process.stdin.on('close', () => process.exit(0));
process.stdin.resume();
process.stdout.write('ready\n');
