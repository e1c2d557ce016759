/**
 * The longest delay one Node timer holds (2^31-1 ms, about 24.8 days). A longer one does not wait: Node
 * clamps it to 1 ms and fires at once.
 */
export const maxTimerMs = 2 ** 31 - 1;

export interface LongTimer {
  clear(): void;
}

/**
 * Calls `callback` once at `atMs` (ms since the epoch), however far away, and never synchronously: a wait
 * longer than one Node timer holds is armed in chunks, each re-armed from the clock, so a deadline 30 days
 * or a year out fires then and not at once. `chunkMs` and `now` are for tests.
 */
export function setTimeoutAt(
  callback: () => void,
  atMs: number,
  options: { chunkMs?: number; now?: () => number } = {},
): LongTimer {
  if (Number.isNaN(atMs)) throw new RangeError(`setTimeoutAt: ${atMs} is not a time`);
  const chunkMs = Math.min(options.chunkMs ?? maxTimerMs, maxTimerMs);
  const now = options.now ?? Date.now;
  const delay = () => Math.max(0, Math.min(atMs - now(), chunkMs));
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    if (atMs - now() > 0) timer = setTimeout(tick, delay());
    else callback();
  };
  // A wait with no end holds no timer.
  if (atMs !== Number.POSITIVE_INFINITY) timer = setTimeout(tick, delay());
  return { clear: () => clearTimeout(timer) };
}
