import { describe, expect, it } from 'vitest';
import { clientNames } from '../../src/redis/worker-registry.js';
import { workerConnectionName } from '../../src/worker/dead-worker-watch.js';

describe('clientNames (CLIENT LIST)', () => {
  it('takes each connection name, skipping unnamed connections', () => {
    const name = workerConnectionName('0b6f1c9e-5a43-4c1e-9d0a-1f2e3d4c5b6a');
    const listing = [
      `id=3 addr=127.0.0.1:50000 laddr=127.0.0.1:6379 fd=8 name=${name} age=4 idle=0 flags=N db=0 cmd=evalsha`,
      'id=4 addr=127.0.0.1:50002 laddr=127.0.0.1:6379 fd=9 name= age=4 idle=0 flags=N db=0 cmd=client|list',
      'id=5 addr=127.0.0.1:50004 laddr=127.0.0.1:6379 fd=10 name=ratchet:{0}:c3RlcA==:w age=1 flags=N db=0',
      '',
    ].join('\n');
    expect(clientNames(listing)).toEqual(new Set([name, 'ratchet:{0}:c3RlcA==:w']));
  });

  it('names a worker connection without spaces (CLIENT SETNAME refuses them)', () => {
    expect(workerConnectionName('an-id')).toBe('ratchet:w:an-id');
  });
});
