import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Poll<T> {
  /** The latest answer (kept while a later call fails). */
  data: T | undefined;
  /** The latest call's error, cleared by the next success. */
  error: unknown;
  /** Calls again now (after an action), without waiting for the next tick. */
  refresh: () => void;
}

/**
 * Calls `load` now and every `intervalMs` (2 s) while the page is shown: it stops while the tab is hidden
 * and on unmount (the call in flight is aborted), and starts again from `deps` when they change. One call at
 * a time: a slow API is never asked twice at once.
 */
export function usePoll<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: readonly unknown[],
  intervalMs = 2000,
): Poll<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [generation, setGeneration] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let running = false;
    const tick = async () => {
      timer = undefined;
      if (document.hidden || running || controller.signal.aborted) return;
      running = true;
      try {
        const value = await loadRef.current(controller.signal);
        if (controller.signal.aborted) return;
        setData(value);
        setError(undefined);
      } catch (failure) {
        if (controller.signal.aborted) return;
        setError(failure);
      } finally {
        running = false;
      }
      if (!controller.signal.aborted && !document.hidden) timer = setTimeout(tick, intervalMs);
    };
    const onVisibility = () => {
      if (!document.hidden && timer === undefined && !running) void tick();
    };
    document.addEventListener('visibilitychange', onVisibility);
    void tick();
    return () => {
      controller.abort();
      if (timer !== undefined) clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [...deps, generation, intervalMs]);

  const refresh = useCallback(() => setGeneration((value) => value + 1), []);
  return { data, error, refresh };
}
