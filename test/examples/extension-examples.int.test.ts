import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import { deleteKeys } from '../../src/testing/test-engine.js';
import { runExample } from '../helpers/run-example.js';

// The extension examples, each run as a user runs it (`npx tsx examples/<name>.ts`) against the test Redis,
// under a key prefix of its own that is removed afterwards.
const prefixes: string[] = [];

afterEach(async () => {
  const redis = createRedis({ url: inject('redisUrl'), logger: silentLogger(), name: 'example-cleanup' });
  try {
    for (const prefix of prefixes.splice(0)) await deleteKeys(redis, prefix);
  } finally {
    await closeRedis(redis);
  }
});

async function run(name: string) {
  const prefix = `t-example-${randomBytes(6).toString('hex')}`;
  prefixes.push(prefix);
  const { code, stdout, stderr } = await runExample(name, {
    env: { REDIS_URL: inject('redisUrl'), RATCHET_PREFIX: prefix },
  });
  return { code, stderr, lines: stdout.trim().split('\n') };
}

describe('examples/email-redaction-effect.ts', () => {
  it('completes, and the model is never sent the address the transcript keeps', async () => {
    const { code, stderr, lines } = await run('email-redaction-effect.ts');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(lines[0]).toBe('completed Drafted the refund note for the customer.');
    const sent = lines.filter((line) => line.startsWith('model was sent'));
    expect(sent).toContain('model was sent (user): Write to [email removed] that her refund was sent.');
    expect(sent.join('\n')).not.toContain('@');
    expect(lines).toContain('transcript keeps: Write to jane.doe@example.com that her refund was sent.');
  });
});

describe('examples/after-reply-effect.ts', () => {
  it("adds the reviewer's note after a short answer, with its progress event", async () => {
    const { code, stderr, lines } = await run('after-reply-effect.ts');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(lines).toEqual([
      'completed Refund sent.',
      'user: Was my refund sent?',
      'support: Refund sent.',
      'reviewer: The answer has 2 words; ask for more detail if needed.',
      'progress: {"fraction":null,"message":"support answered in 2 words"}',
    ]);
  });
});

describe('examples/keyword-coordinator.ts', () => {
  it('gives the task to the member whose role it names, and only to it', async () => {
    const { code, stderr, lines } = await run('keyword-coordinator.ts');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(lines).toEqual([
      'completed Reviewed: the second sentence needs a verb.',
      'user: Please review: The fox quickly the fence.',
      'reviewer: Reviewed: the second sentence needs a verb.',
    ]);
  });
});

describe('examples/stop-predicate.ts', () => {
  it('takes turns until the predicate holds, and stops there', async () => {
    const { code, stderr, lines } = await run('stop-predicate.ts');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(lines).toEqual([
      'completed A quick brown fox jumps over the lazy dog at dawn.',
      'user: Write one sentence about a fox.',
      'writer: A fox jumps.',
      'editor: Too short: say more.',
      'writer: A quick brown fox jumps over the lazy dog at dawn.',
    ]);
  });
});
