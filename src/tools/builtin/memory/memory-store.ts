/** Whose memory: one agent's, or the whole deployment's (every agent reads it). */
export type MemoryScope = { kind: 'agent'; agent: string } | { kind: 'deployment' };

/** The most a memory holds, and how long a note lives after its last write. */
export interface MemoryLimits {
  maxNotes: number;
  maxBytes: number;
  retentionMs: number;
}

export type MemoryWriteResult =
  | { kind: 'written' | 'deleted' | 'repeated' | 'not_found' }
  | { kind: 'full'; notes: number }
  | { kind: 'too_big'; bytes: number };

/**
 * Memory that outlives sessions (the `memory` toolbox, GET /v1/agents/:name/memory, and what a run is given
 * at its start): notes by name, as the JSON text the toolbox wrote; the toolbox parses and checks them.
 * The port the memory toolbox calls; src/redis implements it (memory-write.lua).
 */
export interface MemoryStore {
  /** Writes a note, or deletes it when `json` is null, once per call key. */
  write(
    scope: MemoryScope,
    write: { name: string; json: string | null; callKey: string; nowMs: number },
    limits: MemoryLimits,
  ): Promise<MemoryWriteResult>;
  /** Every note's JSON text by name (expired notes included until the next write drops them). */
  read(scope: MemoryScope): Promise<Record<string, string>>;
}
