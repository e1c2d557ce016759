// BENCH_TELEMETRY=on: the bench's workers export traces and serve metrics, as a deployment with telemetry
// on does, so `npm run bench` measures what telemetry costs (docs/operations.md). Spans go to an OTLP/HTTP
// receiver that reads each export and answers 200, counting what it got. The receiver runs in a child
// process, as a collector runs apart from the workers it serves: reading the exports is the collector's CPU,
// not the worker's, and the bench's CPU per job counts this process only. Metrics are served on a free port
// and never scraped (counting is the cost a step pays; a scrape is the scraper's).
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

export const telemetryOn = process.env.BENCH_TELEMETRY === 'on';

export interface TelemetrySink {
  /** The telemetry section of a bench config. */
  config: { traces: Record<string, unknown>; metrics: Record<string, unknown> };
  /** Span exports received and their bytes so far. */
  counts(): Promise<{ requests: number; bytes: number }>;
  close(): Promise<void>;
}

// The receiver: answers every POST with 200 after reading it, and GET /counts with what it has read.
const receiver = `
const { createServer } = require('node:http');
let requests = 0, bytes = 0;
const server = createServer((request, response) => {
  request.on('data', (chunk) => { bytes += chunk.length; });
  request.on('end', () => {
    if (request.method === 'GET') return response.end(JSON.stringify({ requests, bytes }));
    requests += 1;
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
process.on('disconnect', () => process.exit(0));
`;

let sink: Promise<TelemetrySink> | undefined;

async function startSink(): Promise<TelemetrySink> {
  const child: ChildProcess = spawn(process.execPath, ['-e', receiver], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const [line] = (await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(() => {
      throw new Error('the telemetry sink exited before listening');
    }),
  ])) as [string];
  const port = Number(line);
  const base = `http://127.0.0.1:${port}`;
  return {
    config: {
      // BENCH_QUEUE_SPANS=on: BullMQ's queue spans too (telemetry.traces.queue_spans, off by default).
      traces: {
        enabled: true,
        endpoint: `${base}/v1/traces`,
        ...(process.env.BENCH_QUEUE_SPANS === 'on' ? { queue_spans: true } : {}),
      },
      metrics: { enabled: true, worker_port: 0 },
    },
    counts: async () => (await (await fetch(`${base}/counts`)).json()) as { requests: number; bytes: number },
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The sink of this process (started on first use), or undefined when BENCH_TELEMETRY is not `on`. */
export async function telemetrySink(): Promise<TelemetrySink | undefined> {
  if (!telemetryOn) return undefined;
  sink ??= startSink();
  return sink;
}
