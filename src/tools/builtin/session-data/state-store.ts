/**
 * The session's shared state as the `state` toolbox (and a team's coordinator) reads and writes it: JSON
 * text by key; the toolbox parses and checks it. The port the toolbox calls; src/redis implements it
 * (state-set.lua, state-watch.lua, state-delete.lua).
 */
export interface StateStore {
  /** The JSON text under a state key, or null. */
  readState(key: string): Promise<string | null>;
  stateKeys(): Promise<string[]>;
  hasState(key: string): Promise<boolean>;
  /** Sets a key unless the state is full; the watchers it woke come back as JSON text. */
  setState(
    key: string,
    json: string,
    maxKeys: number,
  ): Promise<{ kind: 'set'; watchers: string } | { kind: 'full'; keys: number }>;
  /**
   * Deletes a key once per call (`callKey`, its idempotency key): true when the key was set. A call run again
   * gets its first answer and deletes nothing, while its answer is among the latest `keptAnswers`.
   */
  deleteState(deletion: { key: string; callKey: string; keptAnswers: number }): Promise<boolean>;
  /**
   * Looks at a key for a watching call: its value when set, a timeout past the deadline, or the watch is
   * recorded and the call waits until `deadline`.
   */
  watchState(watch: {
    key: string;
    jobId: string;
    callKey: string;
    deadlineMs: number;
    nowMs: number;
  }): Promise<
    { kind: 'found'; json: string } | { kind: 'timed_out' } | { kind: 'waiting'; deadlineMs: number }
  >;
}
