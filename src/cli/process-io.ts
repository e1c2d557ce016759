import { join } from 'node:path';
import { packageRoot } from './cli-config.js';
import { type Invocation, invocationOf } from './invocation.js';

export type SignalName = 'SIGINT' | 'SIGTERM';

/** Handlers of a process signal, latest first: while any is registered, only the latest one is called. */
export interface SignalHandlers {
  on(handler: () => void): () => void;
}

/** What a command needs of its process: the standard streams, the environment, and its signals. */
export interface ProcessIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** SIGINT (Ctrl-C at a terminal whose stdin is not read by the CLI, or `kill -INT`). */
  interrupts: SignalHandlers;
  /** SIGTERM. */
  terminations: SignalHandlers;
  /** How the user runs `ratchet` from their shell (`npx ratchet` in a checkout): what suggested commands say. */
  invocation: Invocation;
}

export function processIo(): ProcessIo {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    interrupts: signalHandlers('SIGINT'),
    terminations: signalHandlers('SIGTERM'),
    invocation: invocationOf({ path: process.env.PATH, bin: join(packageRoot, 'bin/ratchet.mjs') }),
  };
}

function signalHandlers(signal: SignalName): SignalHandlers {
  const handlers: (() => void)[] = [];
  const dispatch = () => handlers.at(-1)?.();
  return {
    on(handler) {
      if (handlers.length === 0) process.on(signal, dispatch);
      handlers.push(handler);
      return () => {
        const index = handlers.lastIndexOf(handler);
        if (index !== -1) handlers.splice(index, 1);
        if (handlers.length === 0) process.removeListener(signal, dispatch);
      };
    },
  };
}
