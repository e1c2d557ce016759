import { describe, expect, it } from 'vitest';
import { extensionContext, seededRandom } from '../../src/extensions/context.js';

const step = {
  sessionId: 'ses_0123456789abcdef',
  runId: 'run_0123456789abcdef_0123456789',
  agent: 'helper',
  iteration: 3,
  now: '2026-01-02T03:04:05.000Z',
};

describe('extensionContext', () => {
  it('gives the same random sequence on every execution of a step', () => {
    const first = extensionContext('router', step);
    const second = extensionContext('router', step);
    const a = [first.random(), first.random(), first.random()];
    expect([second.random(), second.random(), second.random()]).toEqual(a);
    for (const value of a) {
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(1);
    }
  });

  it('seeds each extension and each iteration differently', () => {
    const base = extensionContext('router', step).random();
    expect(extensionContext('scrubber', step).random()).not.toBe(base);
    expect(extensionContext('router', { ...step, iteration: 4 }).random()).not.toBe(base);
    expect(extensionContext('router', { ...step, runId: `${step.runId.slice(0, -1)}x` }).random()).not.toBe(
      base,
    );
  });

  it('takes its time and ids from the step, not the clock', () => {
    const context = extensionContext('router', step);
    expect(context.now).toBe(step.now);
    expect(context.id('choice')).toBe(extensionContext('router', step).id('choice'));
    expect(context.id('choice')).not.toBe(extensionContext('other', step).id('choice'));
  });
});

describe('seededRandom', () => {
  it('spreads its numbers over [0, 1)', () => {
    const random = seededRandom('spread');
    const buckets = new Array<number>(10).fill(0);
    for (let index = 0; index < 10_000; index += 1) {
      const bucket = Math.floor(random() * 10);
      buckets[bucket] = (buckets[bucket] ?? 0) + 1;
    }
    for (const count of buckets) expect(count).toBeGreaterThan(800);
  });
});

describe('extensionContext around one call of a step', () => {
  it('seeds each call of the step differently, and the same on every execution', () => {
    const first = extensionContext('router', { ...step, scope: 'call_1' });
    expect(first.random()).toBe(extensionContext('router', { ...step, scope: 'call_1' }).random());
    expect(extensionContext('router', { ...step, scope: 'call_2' }).random()).not.toBe(
      extensionContext('router', { ...step, scope: 'call_1' }).random(),
    );
    expect(first.id('x')).not.toBe(extensionContext('router', step).id('x'));
  });
});
