import { createHash } from 'node:crypto';

/**
 * What an extension (an effect, a middleware, a coordinator, a stop predicate) is given besides its own
 * input: only deterministic things, so that a step that runs again on another worker would decide the same
 * even where the framework did not record the decision (see docs/extending.md, "Replay safety").
 *
 * Every field is derived from persisted data or from the step's identity: no clock, no process state, no
 * `Math.random`.
 */
export interface ExtensionContext {
  /** The extension's registered name (an effect's kind, a middleware's name): used in errors and seeds. */
  readonly name: string;
  readonly sessionId: string;
  readonly runId: string;
  /** The agent (or team) the step works for. */
  readonly agent: string;
  /** The step's iteration (a team's turn): 0-based, as in the journal. */
  readonly iteration: number;
  /**
   * The step's time, ISO 8601: a time recorded before the step began (the run's last commit), the same on
   * every execution of the step. Use it instead of `Date.now()`.
   */
  readonly now: string;
  /**
   * A pseudo-random number in [0, 1), from a generator seeded with the run id, the iteration and the
   * extension's name: the same sequence on every execution of the step, a different one for each extension.
   */
  random(): number;
  /** An id unique to this step, extension and `label`, the same on every execution of the step. */
  id(label: string): string;
}

/** The step an extension runs in: what {@link extensionContext} derives everything from. */
export interface ExtensionStep {
  sessionId: string;
  runId: string;
  agent: string;
  iteration: number;
  /** A persisted time (ISO 8601), not the clock: see {@link ExtensionContext.now}. */
  now: string;
  /** Which of the step's calls (a tool call's id): extensions around each call get a seed of their own. */
  scope?: string;
}

/** The context of the extension `name` in `step`. */
export function extensionContext(name: string, step: ExtensionStep): ExtensionContext {
  const where = step.scope === undefined ? `${step.iteration}` : `${step.iteration}/${step.scope}`;
  return {
    name,
    sessionId: step.sessionId,
    runId: step.runId,
    agent: step.agent,
    iteration: step.iteration,
    now: step.now,
    random: seededRandom(`${step.runId}/${where}/${name}`),
    id: (label) =>
      `${step.runId}-i${step.iteration}${step.scope === undefined ? '' : `-${step.scope}`}-x-${name}-${label}`,
  };
}

/**
 * A generator of numbers in [0, 1) seeded from `seed` (sfc32, with its state taken from the seed's SHA-256):
 * the same seed gives the same sequence in every process and every version of Node.
 */
export function seededRandom(seed: string): () => number {
  const digest = createHash('sha256').update(seed).digest();
  let a = digest.readUInt32LE(0);
  let b = digest.readUInt32LE(4);
  let c = digest.readUInt32LE(8);
  let d = digest.readUInt32LE(12);
  const next = () => {
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4_294_967_296;
  };
  // The first outputs of sfc32 still show its seed: skip them.
  for (let index = 0; index < 12; index += 1) next();
  return next;
}
