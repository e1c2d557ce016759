/**
 * Wraps a handler that Playwright or an event emitter calls (a route, a WebSocket, a page event), so that
 * nothing it does can reach the caller: a throw or a rejection, of any value, goes to `onFailure`, and a throw
 * there is dropped. What a page does decides what these handlers meet (a frame that does not exist yet, a page
 * closed under them), and an error escaping one would end the worker's process.
 */
export function containedHandler<A extends unknown[]>(
  handler: (...args: A) => unknown,
  onFailure: (error: unknown, ...args: A) => unknown,
): (...args: A) => Promise<void> {
  const failed = async (error: unknown, args: A) => {
    try {
      await onFailure(error, ...args);
    } catch {
      // The failure's own handling failed: nothing is left that could be done, and the process must go on.
    }
  };
  return async (...args: A) => {
    try {
      await handler(...args);
    } catch (error) {
      await failed(error, args);
    }
  };
}

/** The message of anything thrown (a page or a library may throw a string, undefined, an object ...). */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    return 'an error that cannot be shown';
  }
}
