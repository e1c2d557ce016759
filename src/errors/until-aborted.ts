/**
 * Settles as `work` does, or rejects with the signal's reason as soon as the signal aborts (at once when it
 * already has), whichever comes first: how code that may ignore its signal (a user's middleware, a tool
 * handler) is stopped from holding its step. The work itself is not stopped; what it settles with later is
 * dropped (a late rejection is observed, not reported as unhandled).
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
