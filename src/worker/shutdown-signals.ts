// Imports nothing: an entry point imports this first and loads everything else after installing it.

export type ShutdownSignal = 'SIGTERM' | 'SIGINT';

let installed = false;
let received: ShutdownSignal | undefined;
let handler: ((signal: ShutdownSignal) => void) | undefined;

function onSignal(signal: ShutdownSignal): void {
  if (handler) handler(signal);
  else received ??= signal;
}

/**
 * Catches SIGTERM and SIGINT from now on. Node's default for both is death by the signal (exit 143 or 130,
 * nothing logged); a worker's modules and config take a second or more to load, and a signal in that time
 * must be a clean shutdown like any other. Until `onShutdownSignal` is given a handler, the first signal is
 * kept for it.
 */
export function catchShutdownSignals(): void {
  if (installed) return;
  installed = true;
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
}

/** Who handles the signals from now on; a signal caught before is handed over on the next turn. */
export function onShutdownSignal(next: (signal: ShutdownSignal) => void): void {
  catchShutdownSignals();
  handler = next;
  const early = received;
  received = undefined;
  if (early) setImmediate(() => next(early));
}
