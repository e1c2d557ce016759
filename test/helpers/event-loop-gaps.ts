/**
 * Watches this process's event loop with a 5 ms timer: `stop()` ends the watch and returns the longest gap
 * between two ticks (a loop blocked by tool input shows as a long gap).
 */
export function watchEventLoop(): { stop(): number } {
  let longestGap = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
  }, 5);
  return {
    stop() {
      clearInterval(ticker);
      return Math.max(longestGap, performance.now() - last);
    },
  };
}
