import { z } from 'zod';
import { integer, withDefault } from '../schemas/index.js';

/** The most days a memory note may be kept after its last write (ten years: the timer stays in range). */
export const maxMemoryRetentionDays = 3650;

/**
 * `tools.memory`: notes the `memory` toolbox keeps for an agent (or the whole deployment) across sessions.
 * Each scope (one agent's memory, the deployment's) is bounded on its own.
 */
export const memorySchema = z.strictObject({
  /** The most notes one scope holds. */
  max_notes: withDefault(integer(1, 10_000), 50),
  /** The most characters of one note. */
  max_note_chars: withDefault(integer(1, 1_000_000), 4_000),
  /** The most bytes of all notes of one scope together (what a run is given at its start is within it). */
  max_bytes: withDefault(integer(1, 10_000_000), 32_768),
  /** A note not rewritten for this many days is forgotten. */
  retention_days: withDefault(integer(1, maxMemoryRetentionDays), 90),
});

/**
 * `tools.project_context`: the project's own context files, read from the workspace root and added to the
 * instructions of agents that work on the workspace, at the start of each run.
 */
export const projectContextSchema = z.strictObject({
  /** Off: no file is read. */
  enabled: withDefault(z.boolean(), true),
  /** Files relative to the workspace root, in the order they are added; a missing one is skipped. */
  files: withDefault(z.array(z.string().min(1).max(1024)).max(20), ['AGENTS.md', '.ratchet/context.md']),
  /** The most bytes read of all files together; a file past it is cut, with a note saying so. */
  max_bytes: withDefault(integer(1, 1_048_576), 32_768),
});
