import type { Redis } from 'ioredis';

type Write = (...args: unknown[]) => boolean;

/** A connection's socket as far as coalescing needs it (a net.Socket or tls.TLSSocket). */
interface CorkableStream {
  write: Write;
  cork(): void;
  uncork(): void;
}

const coalescingClients = new WeakSet<Redis>();
const corkedStreams = new WeakSet<CorkableStream>();

/**
 * Makes every command a connection sends within one turn of the event loop leave in one socket write.
 *
 * A worker's steps resume together when a batch of replies arrives, and each sends its next command from a
 * promise continuation; unbatched, each of those is a write system call of its own (measured: about 15%
 * of a worker's CPU on the tool loop). ioredis' auto-pipelining batches them too, but builds a Pipeline per
 * tick into which it copies every script defined on the connection, which costs more than it saves at
 * worker concurrency. This corks the socket at the first write of a turn and uncorks it on the next
 * `process.nextTick`, which Node runs once the current burst of promise continuations has drained: Node
 * then hands the buffered commands to the kernel in one writev. Order on the connection is unchanged, so
 * every guarantee that rests on it (a count sent before a commit is applied before it) still holds.
 *
 * Applied to each socket the client opens (a reconnect opens a new one), and carried over to the client's
 * duplicates (BullMQ duplicates the connection a worker is given).
 */
export function coalesceWrites(redis: Redis): Redis {
  if (coalescingClients.has(redis)) return redis;
  coalescingClients.add(redis);
  const corkCurrentStream = () => corkPerTurn(redis.stream as unknown as CorkableStream);
  redis.on('connect', corkCurrentStream);
  if (redis.status === 'connect' || redis.status === 'ready') corkCurrentStream();
  const duplicate = redis.duplicate.bind(redis);
  redis.duplicate = (override) => coalesceWrites(duplicate(override));
  return redis;
}

function corkPerTurn(stream: CorkableStream): void {
  if (corkedStreams.has(stream)) return;
  corkedStreams.add(stream);
  const write = stream.write;
  let corked = false;
  const uncork = () => {
    corked = false;
    stream.uncork();
  };
  stream.write = (...args: unknown[]): boolean => {
    if (!corked) {
      corked = true;
      stream.cork();
      process.nextTick(uncork);
    }
    return write.apply(stream, args);
  };
}
