// BENCH_TELEMETRY=on: the bench's workers export traces and serve metrics, as a deployment with telemetry
// on does, so `npm run bench` measures what telemetry costs (docs/operations.md). Spans go to an OTLP/HTTP
// receiver in this process that reads each export and answers 200, counting what it got; metrics are served
// on a free port and never scraped (counting is the cost a step pays; a scrape is the scraper's).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const telemetryOn = process.env.BENCH_TELEMETRY === 'on';

export interface TelemetrySink {
  /** The telemetry section of a bench config. */
  config: { traces: Record<string, unknown>; metrics: Record<string, unknown> };
  requests: number;
  bytes: number;
  close(): Promise<void>;
}

let sink: TelemetrySink | undefined;

/** The sink of this process (started on first use), or undefined when BENCH_TELEMETRY is not `on`. */
export async function telemetrySink(): Promise<TelemetrySink | undefined> {
  if (!telemetryOn) return undefined;
  if (sink !== undefined) return sink;
  const server: Server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => {
      if (sink) sink.bytes += chunk.length;
    });
    request.on('end', () => {
      if (sink) sink.requests += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  sink = {
    config: {
      traces: { enabled: true, endpoint: `http://127.0.0.1:${port}/v1/traces` },
      metrics: { enabled: true, worker_port: 0 },
    },
    requests: 0,
    bytes: 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return sink;
}
