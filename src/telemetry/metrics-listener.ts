import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { bearerToken, digest, hostPolicy, matchesDigest, refusedHeader } from '../http/index.js';

export interface MetricsListenerOptions {
  host: string;
  /** 0: any free port. */
  port: number;
  /** `api.allowed_hosts`: further names the listener is reached by (a scraper's target). */
  allowedHosts: readonly string[];
  /** `api.allowed_origins`. */
  allowedOrigins: readonly string[];
  /** `telemetry.metrics.worker_token`: the bearer token a scrape must send; none = no token. */
  token?: string | undefined;
}

/**
 * A worker's `GET /metrics` (Prometheus text) on its own small listener: workers serve no other HTTP. Anything
 * else gets 404. The same guard as the API's (src/http/host-policy.ts): a page whose name was rebound to
 * 127.0.0.1 would otherwise read the worker's metrics (agents, tools, models, queue sizes) with its own Host;
 * with `worker_token` every scrape sends `Authorization: Bearer <token>`, and the Host check then applies only
 * when `api.allowed_hosts` is set, as on the API.
 */
export class MetricsListener {
  private server: Server | undefined;

  constructor(private readonly registry: Registry) {}

  /** Listens; resolves with the port (the one asked for, or the one given for 0). */
  async start(options: MetricsListenerOptions): Promise<number> {
    const policy = hostPolicy({
      bindHost: options.host,
      allowedHosts: options.allowedHosts,
      allowedOrigins: options.allowedOrigins,
      authenticated: options.token !== undefined,
    });
    const tokens = options.token === undefined ? [] : [digest(options.token)];
    const server = createServer((request, response) => {
      const refused = refusedHeader(policy, { host: request.headers.host, origin: request.headers.origin });
      if (refused !== undefined) {
        send(response, 403, refusal(refused, request));
        return;
      }
      if (tokens.length > 0) {
        const presented = bearerToken(request.headers.authorization);
        if (presented === undefined || !matchesDigest(tokens, presented)) {
          response.setHeader('www-authenticate', 'Bearer');
          send(
            response,
            401,
            presented === undefined
              ? 'this metrics listener needs an Authorization: Bearer <token> header (telemetry.metrics.worker_token)\n'
              : 'the bearer token is not valid (telemetry.metrics.worker_token)\n',
          );
          return;
        }
      }
      if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
        send(response, 404, 'not found: this listener serves GET /metrics only\n');
        return;
      }
      this.registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': this.registry.contentType }).end(text),
        () => send(response, 500, 'metrics failed\n'),
      );
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
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

function send(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(text);
}

function refusal(header: 'Host' | 'Origin', request: IncomingMessage): string {
  const value = (header === 'Host' ? request.headers.host : request.headers.origin) ?? '';
  const shown = value.length > 200 ? `${value.slice(0, 200)}…` : value;
  const setting = header === 'Host' ? 'api.allowed_hosts' : 'api.allowed_origins';
  return (
    `requests with ${header} "${shown}" are refused: this metrics listener answers only to loopback names, ` +
    `its own address and ${setting} (a guard against DNS rebinding; add it to ${setting}, or set ` +
    'telemetry.metrics.worker_token)\n'
  );
}
