import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface TcpProxyOptions {
  /** Where to forward (a Redis server). */
  target: { host: string; port: number };
  /** Added to every chunk in each direction (0.5: a Redis a network hop away). Sub-millisecond is kept. */
  delayMs?: number;
  /** The loopback port to listen on (a free one when absent). */
  port?: number;
}

/** One direction of a proxied connection: chunks wait until their time (and while the proxy is paused). */
class DelayedPipe {
  private readonly pending: { due: number; chunk: Buffer }[] = [];
  private scheduled = false;

  constructor(
    private readonly to: Socket,
    private readonly delayMs: number,
    private readonly paused: () => boolean,
  ) {}

  push(chunk: Buffer): void {
    this.pending.push({ due: performance.now() + this.delayMs, chunk });
    this.drain();
  }

  /**
   * Writes every chunk that is due. Timers are whole milliseconds, so the last millisecond is waited out with
   * setImmediate (this spins a little: run a delaying proxy in a process of its own, bench/latency-proxy.ts).
   */
  drain = (): void => {
    this.scheduled = false;
    if (this.paused() || this.to.destroyed) return;
    const now = performance.now();
    while (this.pending.length > 0 && (this.pending[0]?.due ?? 0) <= now) {
      this.to.write((this.pending.shift() as { chunk: Buffer }).chunk);
    }
    const next = this.pending[0];
    if (!next || this.scheduled) return;
    this.scheduled = true;
    const wait = next.due - now;
    if (wait >= 2) setTimeout(this.drain, Math.floor(wait) - 1);
    else setImmediate(this.drain);
  };
}

/**
 * A TCP proxy on loopback between clients and Redis. It can add a fixed delay each way (a Redis a network hop
 * away), and pause: the connections stay open but nothing passes (a network partition, as Redis sees it:
 * the client's connections are still listed), until `resume`. `cut` closes every connection (a reset).
 */
export class TcpProxy {
  private readonly open = new Set<Socket>();
  private readonly pipes = new Set<DelayedPipe>();
  private isPaused = false;

  private constructor(
    private readonly server: Server,
    private readonly options: TcpProxyOptions,
  ) {}

  static async start(options: TcpProxyOptions): Promise<TcpProxy> {
    let proxy: TcpProxy | undefined;
    const server = createServer((socket) => proxy?.accept(socket));
    proxy = new TcpProxy(server, options);
    await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    return address.port;
  }

  /** The proxy as a Redis URL. */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  pause(): void {
    this.isPaused = true;
  }

  resume(): void {
    this.isPaused = false;
    for (const pipe of this.pipes) pipe.drain();
  }

  async close(): Promise<void> {
    for (const socket of this.open) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const upstream = createConnection(this.options.target);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    this.open.add(client).add(upstream);
    const delayMs = this.options.delayMs ?? 0;
    const toUpstream = new DelayedPipe(upstream, delayMs, () => this.isPaused);
    const toClient = new DelayedPipe(client, delayMs, () => this.isPaused);
    this.pipes.add(toUpstream).add(toClient);
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
      this.open.delete(client);
      this.open.delete(upstream);
      this.pipes.delete(toUpstream);
      this.pipes.delete(toClient);
    };
    client.on('error', closeBoth).on('close', closeBoth);
    upstream.on('error', closeBoth).on('close', closeBoth);
    client.on('data', (chunk: Buffer) => toUpstream.push(chunk));
    upstream.on('data', (chunk: Buffer) => toClient.push(chunk));
  }
}
