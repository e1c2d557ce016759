/**
 * The session's notes as the `notes` toolbox reads and writes them: JSON text by field (`session:<name>`,
 * `agent:<agent>:<name>`); the toolbox parses and checks it. The port the toolbox calls; src/redis implements
 * it (note-write.lua).
 */
export interface NoteStore {
  /** Writes a note unless the session is full of them. */
  writeNote(
    field: string,
    json: string,
    maxNotes: number,
  ): Promise<{ kind: 'written' } | { kind: 'full'; notes: number }>;
  readNote(field: string): Promise<string | null>;
  noteFields(): Promise<string[]>;
}
