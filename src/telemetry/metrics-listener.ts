import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/**
 * A worker's `GET /metrics` (Prometheus text) on its own small listener: workers serve no other HTTP. Anything
 * else gets 404.
 */
export class MetricsListener {
  private server: Server | undefined;

  constructor(private readonly registry: Registry) {}

  /** Listens; resolves with the port (the one asked for, or the one given for 0). */
  async start(host: string, port: number): Promise<number> {
    const server = createServer((request, response) => {
      if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
      }
      this.registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': this.registry.contentType }).end(text),
        () => response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics failed\n'),
      );
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return (server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
