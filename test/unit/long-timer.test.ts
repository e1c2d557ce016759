import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { maxTimerMs, setTimeoutAt } from '../../src/worker/long-timer.js';

// A Node timer holds at most 2^31-1 ms; setTimeoutAt waits longer by re-arming in chunks.
beforeEach(() => {
  vi.useFakeTimers({ now: Date.UTC(2026, 0, 1) });
});
afterEach(() => {
  vi.useRealTimers();
});

const day = 86_400_000;

describe('setTimeoutAt', () => {
  it('waits 30 days, past what one Node timer holds, and fires then', () => {
    const fired = vi.fn();
    const at = Date.now() + 30 * day;
    setTimeoutAt(fired, at);
    vi.advanceTimersByTime(maxTimerMs);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(at - Date.now() - 1);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(365 * day);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('re-arms in chunks of the given size, from the clock', () => {
    const fired = vi.fn();
    setTimeoutAt(fired, Date.now() + 1_000, { chunkMs: 300 });
    vi.advanceTimersByTime(300);
    vi.advanceTimersByTime(300);
    vi.advanceTimersByTime(300);
    expect(fired).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(100);
    expect(fired).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('fires a time already past on the next turn, not synchronously', () => {
    const fired = vi.fn();
    setTimeoutAt(fired, Date.now() - 5_000);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(0);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('is cleared between chunks', () => {
    const fired = vi.fn();
    const timer = setTimeoutAt(fired, Date.now() + 400 * day);
    vi.advanceTimersByTime(100 * day);
    timer.clear();
    vi.advanceTimersByTime(400 * day);
    expect(fired).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('holds no timer for a wait with no end, and refuses a time that is not a number', () => {
    setTimeoutAt(() => {}, Number.POSITIVE_INFINITY);
    expect(vi.getTimerCount()).toBe(0);
    expect(() => setTimeoutAt(() => {}, Number.NaN)).toThrow(RangeError);
  });
});
