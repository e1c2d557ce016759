import { describe, expect, it } from 'vitest';
import { type ApiClient, ApiError, type EventStreamOptions } from '../../src/cli/api-client.js';
import { followSessionEvents } from '../../src/cli/follow-events.js';
import type { SseMessage } from '../../src/cli/sse-parser.js';

function message(sequence: number): SseMessage {
  const id = `${sequence}-0`;
  const event = { id, kind: 'progress', run_id: 'run_a_1', agent: 'a', time: '2024-05-01T12:00:00.000Z' };
  return {
    id,
    event: 'progress',
    data: JSON.stringify({ ...event, data: { fraction: null, message: `${sequence}` } }),
  };
}

/** A server whose connections each send the next events and then drop (or fail with `failures`). */
function flakyClient(connections: (SseMessage[] | Error)[]) {
  const requests: (string | undefined)[] = [];
  const client = {
    async *sessionEvents(_session: string, options: EventStreamOptions = {}) {
      requests.push(options.after);
      const next = connections.shift() ?? [];
      if (next instanceof Error) throw next;
      yield* next;
    },
  } as unknown as ApiClient;
  return { client, requests };
}

async function collect(client: ApiClient, count: number, maxFailures = 10): Promise<string[]> {
  const seen: string[] = [];
  const stop = new AbortController();
  for await (const streamed of followSessionEvents(client, 'ses_a', { signal: stop.signal, maxFailures })) {
    if (streamed.known) seen.push(streamed.event.id);
    if (seen.length === count) break;
  }
  return seen;
}

describe('followSessionEvents', () => {
  it('reconnects after a dropped or failed connection with the last id, so no event is missed or repeated', async () => {
    const { client, requests } = flakyClient([
      [message(1), message(2)],
      new ApiError(0, 'unreachable', 'connection refused'),
      [message(3)],
      [message(4), message(5)],
    ]);
    expect(await collect(client, 5)).toEqual(['1-0', '2-0', '3-0', '4-0', '5-0']);
    expect(requests).toEqual([undefined, '2-0', '2-0', '3-0']);
  });

  it('gives up on errors the server means (a 4xx), and after too many failures in a row', async () => {
    const refused = flakyClient([new ApiError(401, 'unauthorized', 'missing bearer token')]);
    await expect(collect(refused.client, 1)).rejects.toThrow('missing bearer token');
    const down = flakyClient([
      new ApiError(0, 'unreachable', 'down'),
      new ApiError(0, 'unreachable', 'down'),
      new ApiError(0, 'unreachable', 'still down'),
    ]);
    await expect(collect(down.client, 1, 2)).rejects.toThrow('still down');
  });
});
