import { describe, expect, it } from 'vitest';
import {
  BytesInFlight,
  CallGate,
  LoadLimitError,
  RequestSlots,
} from '../../src/tools/builtin/browser/browser-load-limits.js';

const never = new AbortController().signal;
const settled = async <T>(promise: Promise<T>) => {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  promise.then(
    () => {
      state = 'resolved';
    },
    () => {
      state = 'rejected';
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return state;
};

function budget(capacity: number) {
  return new BytesInFlight({ capacity, setting: 'tools.browser.max_bytes_in_flight' });
}

describe('BytesInFlight', () => {
  it('holds bytes up to its capacity; a new body waits until another gives its bytes back', async () => {
    const bytes = budget(100);
    const first = await bytes.hold(60, never);
    const second = bytes.hold(60, never);
    expect(await settled(second)).toBe('pending');
    expect(bytes.held).toBe(60);
    first.release();
    first.release(); // once only
    const held = await second;
    expect(bytes.held).toBe(60);
    held.release();
    expect(bytes.held).toBe(0);
  });

  it('grows a body as it arrives (doubling), and serves growing bodies before new ones', async () => {
    const bytes = budget(100);
    const growing = await bytes.hold(10, never);
    expect(growing.grow(5, never)).toBeUndefined(); // within what it holds
    await growing.grow(15, never);
    expect(bytes.held).toBe(20);
    const other = await bytes.hold(70, never);
    const waitingNew = bytes.hold(10, never);
    const waitingGrowth = growing.grow(30, never) as Promise<void>;
    expect(await settled(waitingGrowth)).toBe('pending');
    other.release();
    expect(await settled(waitingGrowth)).toBe('resolved');
    expect(bytes.held).toBe(40 + 10);
    expect(await settled(waitingNew)).toBe('resolved');
  });

  it('refuses the newest growth when every body holding bytes waits to grow (none would give any back)', async () => {
    const bytes = budget(100);
    const a = await bytes.hold(50, never);
    const b = await bytes.hold(50, never);
    const aGrows = a.grow(60, never) as Promise<void>;
    expect(await settled(aGrows)).toBe('pending');
    const bGrows = b.grow(60, never) as Promise<void>;
    await expect(bGrows).rejects.toBeInstanceOf(LoadLimitError);
    await expect(bGrows).rejects.toThrow('tools.browser.max_bytes_in_flight');
    b.release();
    await aGrows;
    expect(bytes.held).toBe(100);
  });

  it('refuses a body larger than the capacity, and forgets a waiter whose request was aborted', async () => {
    const bytes = budget(100);
    const held = await bytes.hold(100, never);
    await expect(held.grow(101, never)).rejects.toThrow('more than 100 bytes');
    const aborted = new AbortController();
    const waiting = bytes.hold(10, aborted.signal);
    aborted.abort(new Error('page closed'));
    await expect(waiting).rejects.toThrow('page closed');
    held.release();
    expect(bytes.held).toBe(0);
  });
});

describe('RequestSlots', () => {
  it('lets `capacity` requests run, the others in order as slots come back', async () => {
    const slots = new RequestSlots(2);
    const one = await slots.acquire(never);
    await slots.acquire(never);
    const third = slots.acquire(never);
    const fourth = slots.acquire(never);
    expect(await settled(third)).toBe('pending');
    one();
    one();
    expect(await settled(third)).toBe('resolved');
    expect(await settled(fourth)).toBe('pending');
  });
});

describe('CallGate', () => {
  it('is open during calls and wakes what waits for the next one', async () => {
    const gate = new CallGate();
    expect(gate.open).toBe(false);
    const next = gate.whenOpen();
    expect(await settled(next)).toBe('pending');
    gate.enter();
    expect(await settled(next)).toBe('resolved');
    gate.leave();
    expect(gate.open).toBe(false);
  });
});
