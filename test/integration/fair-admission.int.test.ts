import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import { admissionKeys, type KeySpace } from '../../src/redis/keys.js';
import { type AdmissionPolicy, admissionPolicyOf, RedisRunAdmission } from '../../src/redis/run-admission.js';
import { defineScripts } from '../../src/redis/scripts.js';
import { spawnNodeProcess } from '../../src/testing/worker-process.js';
import { deleteKeys } from '../helpers/harness.js';

/**
 * Fair admission's decisions (decision 0038) on a real Redis: the admission scripts, through the store the
 * API and the workers use, and racing from two processes.
 */

const repoRoot = resolve(import.meta.dirname, '../..');
let redis: Redis;

beforeAll(() => {
  redis = createRedis({ url: inject('redisUrl'), logger: silentLogger(), name: 'admission-test' });
  defineScripts(redis);
});
afterAll(async () => {
  await closeRedis(redis);
});

/** An admission store on a fresh key space, recording the runs it wakes in order. */
function admissionOf(policy: Partial<AdmissionPolicy>) {
  const space: KeySpace = { prefix: `t-adm-${randomBytes(4).toString('hex')}`, shards: 1 };
  const woken: string[] = [];
  const admission = new RedisRunAdmission({
    redis,
    space,
    policy: { cap: 0, tenants: {}, recheckMs: 30_000, ...policy },
    wake: async (runId) => {
      woken.push(runId);
    },
  });
  return { admission, woken, space, cleanup: () => deleteKeys(redis, space.prefix) };
}

let clock = Date.parse('2026-12-06T08:00:00.000Z');
function run(id: string, tenant: string, priority = 5) {
  clock += 1000;
  return { id, tenant, priority, created_at: new Date(clock).toISOString() };
}

describe('fair admission', () => {
  it('admits within the cap, then fills each freed slot by weighted fair share across tenants', async () => {
    const { admission, woken, space, cleanup } = admissionOf({
      cap: 2,
      tenants: { a: [0, 1], b: [0, 2] },
    });
    try {
      const a = Array.from({ length: 8 }, (_unused, index) => run(`a${index}`, 'a'));
      const b = Array.from({ length: 6 }, (_unused, index) => run(`b${index}`, 'b'));
      const admitted = [];
      for (const candidate of [...a, ...b]) admitted.push(await admission.admit(candidate));
      // The first two of A's fill the cap; everyone else waits.
      expect(admitted.filter(Boolean)).toHaveLength(2);
      expect(woken).toEqual(['a0', 'a1']);
      expect(await admission.isAdmitted('a2')).toBe(false);
      // Each end frees one slot; who gets it is the fair share: B (weight 2) two for each of A's.
      let active = ['a0', 'a1'];
      for (let ends = 0; ends < 9; ends += 1) {
        const ending = active.shift() as string;
        const before = woken.length;
        await admission.release({ id: ending, tenant: ending.startsWith('a') ? 'a' : 'b' });
        expect(woken.length).toBe(before + 1);
        active = [...active, ...woken.slice(before)];
      }
      // B joins at A's virtual time (2, no credit for having been idle). A slot goes to whoever would hold the
      // smaller share of the two slots with it (B first: A holds both); on a tie, the smaller virtual time,
      // then the smaller name: B takes two for each of A's.
      const order = woken.slice(2);
      expect(order).toEqual(['b0', 'a2', 'b1', 'a3', 'b2', 'b3', 'a4', 'b4', 'b5']);
      // A release repeated (a sweep after the worker's own release) frees nothing more.
      const before = woken.length;
      await admission.release({ id: 'a0', tenant: 'a' });
      expect(woken.length).toBe(before);
      expect(await redis.hlen(admissionKeys(space).active)).toBe(2);
    } finally {
      await cleanup();
    }
  });

  it('a tenant that comes while another holds every slot takes the freed slots until the shares are equal', async () => {
    const { admission, woken, cleanup } = admissionOf({ cap: 4 });
    try {
      for (let index = 0; index < 8; index += 1) await admission.admit(run(`a${index}`, 'a'));
      for (let index = 0; index < 4; index += 1) await admission.admit(run(`b${index}`, 'b'));
      expect(woken).toEqual(['a0', 'a1', 'a2', 'a3']);
      // A's first two ends go to B (A would hold 4 of 4, B 1), then A and B each hold two: each refills its own.
      for (const ending of ['a0', 'a1', 'a2', 'b0', 'a3', 'b1'])
        await admission.release({ id: ending, tenant: ending.startsWith('a') ? 'a' : 'b' });
      expect(woken.slice(4)).toEqual(['b0', 'b1', 'a4', 'b2', 'a5', 'b3']);
    } finally {
      await cleanup();
    }
  });

  it('an admitted run that has not started yields its slot to a tenant below its share when its first step asks', async () => {
    const { admission, woken, cleanup } = admissionOf({ cap: 4 });
    try {
      const a = Array.from({ length: 6 }, (_unused, index) => run(`a${index}`, 'a'));
      const b = Array.from({ length: 3 }, (_unused, index) => run(`b${index}`, 'b'));
      for (const candidate of [...a, ...b]) await admission.admit(candidate);
      expect(woken).toEqual(['a0', 'a1', 'a2', 'a3']);
      const starting = { wakeSelf: false, starting: true };
      // a0 starts first: nobody waited when it was admitted, but B waits now with none: A holds 4 of 4.
      expect(await admission.admit(a[0] as ReturnType<typeof run>, starting)).toBe(false);
      expect(woken.slice(4)).toEqual(['b0']);
      expect(await admission.admit(a[1] as ReturnType<typeof run>, starting)).toBe(false);
      expect(woken.slice(5)).toEqual(['b1']);
      // Two each: a2 starts (A's 2 are not above B's 2 + 1).
      expect(await admission.admit(a[2] as ReturnType<typeof run>, starting)).toBe(true);
      // The API asking again (not the run's first step) never takes a slot back.
      expect(await admission.admit(a[3] as ReturnType<typeof run>)).toBe(true);
      // The runs that yielded wait in front of their tenant's queue, and come back when the shares allow.
      await admission.release({ id: 'b0', tenant: 'b' });
      await admission.release({ id: 'a2', tenant: 'a' });
      expect(woken.slice(6)).toEqual(['b2', 'a0']);
      expect(await admission.isAdmitted('a0')).toBe(true);
      expect(await admission.isAdmitted('a1')).toBe(false);
    } finally {
      await cleanup();
    }
  });

  it('holds a tenant at its max_active_runs while others go on, and takes its runs by priority, then age', async () => {
    const { admission, woken, cleanup } = admissionOf({ tenants: { a: [1, 1] } });
    try {
      expect(await admission.admit(run('a-first', 'a'))).toBe(true);
      expect(await admission.admit(run('a-old', 'a', 5))).toBe(false);
      expect(await admission.admit(run('a-urgent', 'a', 9))).toBe(false);
      expect(await admission.admit(run('a-young', 'a', 5))).toBe(false);
      // Another tenant has no limit: admitted at once, whatever A's queue.
      expect(await admission.admit(run('b-any', 'b'))).toBe(true);
      const reasons = await admission.queuedReasons([
        { id: 'a-old', tenant: 'a' },
        { id: 'a-urgent', tenant: 'a' },
        { id: 'b-any', tenant: 'b' },
      ]);
      expect(reasons.get('a-urgent')).toMatchObject({ reason: 'tenant_limit', ahead: 0 });
      expect(reasons.get('a-old')).toMatchObject({ reason: 'tenant_limit', ahead: 1 });
      expect(reasons.get('a-old')?.message).toContain('tenant a has 1 of its 1 active runs');
      expect(reasons.has('b-any')).toBe(false);
      for (const ending of ['a-first', 'a-urgent', 'a-old'])
        await admission.release({ id: ending, tenant: 'a' });
      expect(woken).toEqual(['a-first', 'b-any', 'a-urgent', 'a-old', 'a-young']);
    } finally {
      await cleanup();
    }
  });

  it('a tenant that was idle while another ran alone banks no credit for it', async () => {
    const { admission, woken, cleanup } = admissionOf({ cap: 1 });
    try {
      // B once, then A alone for a long time (no one waits: every run admitted at once).
      await admission.admit(run('b-early', 'b'));
      await admission.release({ id: 'b-early', tenant: 'b' });
      for (let index = 0; index < 10; index += 1) {
        await admission.admit(run(`a-alone-${index}`, 'a'));
        await admission.release({ id: `a-alone-${index}`, tenant: 'a' });
      }
      // Now both wait, B first: they alternate; B does not take the next three for A's ten alone.
      await admission.admit(run('a-busy', 'a'));
      for (const id of ['b1', 'b2', 'b3']) await admission.admit(run(id, 'b'));
      for (const id of ['a1', 'a2', 'a3']) await admission.admit(run(id, 'a'));
      for (const ending of ['a-busy', 'b1', 'a1', 'b2', 'a2']) {
        await admission.release({ id: ending, tenant: ending.startsWith('a') ? 'a' : 'b' });
      }
      expect(woken.slice(-5)).toEqual(['b1', 'a1', 'b2', 'a2', 'b3']);
    } finally {
      await cleanup();
    }
  });

  it('a run cancelled while queued leaves the queue and is never admitted', async () => {
    const { admission, woken, cleanup } = admissionOf({ cap: 1 });
    try {
      await admission.admit(run('first', 'a'));
      await admission.admit(run('cancelled', 'a'));
      await admission.admit(run('next', 'a'));
      await admission.release({ id: 'cancelled', tenant: 'a' });
      expect(woken).toEqual(['first']);
      await admission.release({ id: 'first', tenant: 'a' });
      expect(woken).toEqual(['first', 'next']);
    } finally {
      await cleanup();
    }
  });

  it('two processes racing to admit the same runs admit each once and never over the cap', async () => {
    const cap = 7;
    const { space, cleanup } = admissionOf({});
    try {
      const racers = [0, 1].map((seed) =>
        spawnNodeProcess({
          args: ['--import', 'tsx', join(repoRoot, 'test/fixtures/admission-racer.ts')],
          cwd: repoRoot,
          env: {
            ...process.env,
            RACER_REDIS: inject('redisUrl'),
            RACER_PREFIX: space.prefix,
            RACER_CAP: String(cap),
            RACER_SEED: String(seed),
          },
        }),
      );
      const outputs = await Promise.all(
        racers.map(
          (racer) =>
            new Promise<string>((done, fail) => {
              const timer = setTimeout(() => fail(new Error(`racer timed out:\n${racer.output()}`)), 60_000);
              racer.exited.then(() => {
                clearTimeout(timer);
                done(racer.output());
              }, fail);
            }),
        ),
      );
      const woken = outputs.flatMap((output) =>
        output
          .split('\n')
          .filter((line) => line.startsWith('woken '))
          .map((line) => line.slice('woken '.length)),
      );
      // No run was admitted (woken) twice, by either racer.
      expect(woken.length, outputs.join('\n')).toBeGreaterThanOrEqual(cap);
      expect(new Set(woken).size, outputs.join('\n')).toBe(woken.length);
      // 60 runs, the same 40 released by both racers: of the 20 left, the cap's worth admitted, the rest queued.
      const keys = admissionKeys(space);
      const active = Object.keys(await redis.hgetall(keys.active));
      expect(active).toHaveLength(cap);
      for (const id of active) expect(Number(id.slice('run-'.length))).toBeGreaterThanOrEqual(40);
      const counted = Object.values(await redis.hgetall(keys.counts)).reduce((sum, n) => sum + Number(n), 0);
      expect(counted).toBe(cap);
      const queued = (await redis.zcard(`${keys.queueBase}x`)) + (await redis.zcard(`${keys.queueBase}y`));
      expect(queued).toBe(60 - 40 - cap);
    } finally {
      await cleanup();
    }
  });

  it('a config without a cap or a max_active_runs admits nothing: runs start untracked', () => {
    expect(
      admissionPolicyOf({
        admission: { recheck_s: 30 },
        tenants: { a: { weight: 3, tokens_per_minute: 5 } },
      }),
    ).toBeUndefined();
    expect(
      admissionPolicyOf({ admission: { recheck_s: 2 }, tenants: { a: { weight: 3, max_active_runs: 4 } } }),
    ).toEqual({ cap: 0, tenants: { a: [4, 3] }, recheckMs: 2000 });
  });
});
