import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface CuttingProxyOptions {
  /** Where to forward (the API). */
  target: { host: string; port: number };
  /** How many SSE frames connection number `index` (from 0) passes whole before it is cut. */
  framesBeforeCut: (index: number) => number;
  /** Cut this many connections, then pass everything through. */
  maxCuts: number;
}

const frameStart = Buffer.from('\nid: ');
/** Bytes of the next frame passed on before the cut: the client receives half a frame. */
const partialFrameBytes = 24;

/**
 * A TCP proxy on loopback that cuts each connection in the middle of an SSE frame after a few whole frames,
 * as a flaky network or a restarting load balancer would: the client sees the response end abruptly.
 */
export class CuttingProxy {
  cuts = 0;
  connections = 0;
  private readonly open = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly options: CuttingProxyOptions,
  ) {}

  static async start(options: CuttingProxyOptions): Promise<CuttingProxy> {
    let proxy: CuttingProxy | undefined;
    const server = createServer((socket) => proxy?.accept(socket));
    proxy = new CuttingProxy(server, options);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get url(): string {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    return `http://127.0.0.1:${address.port}`;
  }

  /** Client connections open now. */
  get openConnections(): number {
    return [...this.open].filter((socket) => !socket.destroyed).length;
  }

  async close(): Promise<void> {
    for (const socket of this.open) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const index = this.connections;
    this.connections += 1;
    this.open.add(client);
    const upstream = createConnection(this.options.target);
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
      this.open.delete(client);
    };
    client.on('error', closeBoth).on('close', closeBoth);
    upstream.on('error', closeBoth).on('close', closeBoth);
    client.pipe(upstream);

    const cutting = this.cuts < this.options.maxCuts;
    const limit = this.options.framesBeforeCut(index);
    let frames = 0;
    let matched = 0;
    upstream.on('data', (chunk: Buffer) => {
      if (!cutting || client.destroyed) {
        client.write(chunk);
        return;
      }
      for (let offset = 0; offset < chunk.length; offset += 1) {
        matched =
          chunk[offset] === frameStart[matched] ? matched + 1 : chunk[offset] === frameStart[0] ? 1 : 0;
        if (matched < frameStart.length) continue;
        matched = 0;
        frames += 1;
        if (frames > limit) {
          this.cuts += 1;
          upstream.removeAllListeners('data');
          client.write(chunk.subarray(0, Math.min(chunk.length, offset + partialFrameBytes)), closeBoth);
          return;
        }
      }
      client.write(chunk);
    });
  }
}
