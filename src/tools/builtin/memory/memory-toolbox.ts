import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ToolsConfig } from '../../../config/index.js';
import { redactSecrets } from '../../../secrets/index.js';
import { defineTool, type JsonValue, type ToolContext } from '../../tool.js';
import { createToolBox, type KeepNoteRequest, type ToolBox } from '../../toolbox.js';
import { nameSchema } from '../session-data/session-data.js';
import { type MemoryNoteRecord, memoryInstructions, readMemory } from './memory-notes.js';
import type { MemoryLimits, MemoryScope, MemoryStore } from './memory-store.js';

export interface MemoryToolboxOptions {
  settings: ToolsConfig['memory'];
}

const scopeInput = z
  .enum(['agent', 'deployment'])
  .default('agent')
  .describe('"agent": only you read it; "deployment": every agent of this deployment reads it');

function scopeOf(context: ToolContext, scope: 'agent' | 'deployment'): MemoryScope {
  return scope === 'agent' ? { kind: 'agent', agent: context.agent } : { kind: 'deployment' };
}

const dayMs = 24 * 3600 * 1000;

/** A note cut to the memory's note length, saying so. */
function clipNote(content: string, maxChars: number): string {
  if (content.length <= maxChars) return content;
  const marker = ` [… ${content.length - maxChars} more characters left out]`;
  return marker.length >= maxChars
    ? content.slice(0, maxChars)
    : `${content.slice(0, maxChars - marker.length)}${marker}`;
}

/**
 * `memory`: notes that outlive the session. An agent's notes (or the deployment's) are given to it at the
 * start of each later run. Each write happens once per tool call: a call run again after a crash finds its
 * write recorded (its idempotency key) and changes nothing.
 */
export function memoryToolbox(options: MemoryToolboxOptions): ToolBox {
  const { settings } = options;
  const limits: MemoryLimits = {
    maxNotes: settings.max_notes,
    maxBytes: settings.max_bytes,
    retentionMs: settings.retention_days * dayMs,
  };

  const remember = defineTool({
    name: 'memory_write',
    description:
      'Writes a note to your memory, which you are given at the start of every later run, in any session ' +
      `(replacing a note of the same name). Forgotten after ${settings.retention_days} days without a rewrite. ` +
      'Never store secrets: they are redacted.',
    inputSchema: z.strictObject({
      name: nameSchema('note name').optional().describe('the name of the note (default: a new name)'),
      content: z.string().min(1).max(settings.max_note_chars).describe('the text of the note'),
      scope: scopeInput,
    }),
    idempotent: true,
    handler: async (context, input): Promise<JsonValue> => {
      const now = context.session.now();
      // Without a name, the call's key names the note: a repeated call writes the same note.
      const name =
        input.name ??
        `note-${createHash('sha256').update(context.idempotencyKey).digest('hex').slice(0, 12)}`;
      const problem = await writeNote(context.memory, scopeOf(context, input.scope), {
        name,
        content: input.content,
        agent: context.agent,
        sessionId: context.sessionId,
        runId: context.runId,
        idempotencyKey: context.idempotencyKey,
        now,
      });
      if (problem !== undefined) throw new Error(problem);
      return { written: true, name, scope: input.scope };
    },
  });

  const forget = defineTool({
    name: 'memory_delete',
    description: 'Deletes a note from your memory.',
    inputSchema: z.strictObject({ name: nameSchema('note name'), scope: scopeInput }),
    idempotent: true,
    handler: async (context, input): Promise<JsonValue> => {
      const now = context.session.now();
      const deleted = await context.memory.write(
        scopeOf(context, input.scope),
        { name: input.name, json: null, callKey: context.idempotencyKey, nowMs: now.getTime() },
        limits,
      );
      if (deleted.kind === 'not_found')
        throw new Error(`name: no ${input.scope} memory note "${input.name}"`);
      return { deleted: true, name: input.name, scope: input.scope };
    },
  });

  const list = defineTool({
    name: 'memory_read',
    description: 'Reads your memory as it stands now: your notes and the deployment’s.',
    inputSchema: z.strictObject({}),
    idempotent: true,
    handler: async (context): Promise<JsonValue> => {
      const notes = await readMemory(context.memory, context.agent, context.session.now());
      return {
        notes: notes.map((note) => ({
          name: note.name,
          scope: note.scope,
          content: note.content,
          written_by: note.agent,
          updated_at: note.updated_at,
        })),
      };
    },
  });

  /** Writes a note, redacted; a problem (the memory full, too big) comes back as text naming the setting. */
  async function writeNote(
    memory: MemoryStore,
    scope: MemoryScope,
    note: Omit<KeepNoteRequest, 'memory'>,
  ): Promise<string | undefined> {
    const { now, name } = note;
    const record: MemoryNoteRecord = {
      v: 1,
      name,
      // A secret known to the worker (a provider key, an env secret) is never kept, whatever the model says.
      content: redactSecrets(note.content),
      agent: note.agent,
      session_id: note.sessionId,
      run_id: note.runId,
      updated_at: now.toISOString(),
      expires_at: new Date(now.getTime() + limits.retentionMs).toISOString(),
    };
    const written = await memory.write(
      scope,
      { name, json: JSON.stringify(record), callKey: note.idempotencyKey, nowMs: now.getTime() },
      limits,
    );
    const where = scope.kind === 'agent' ? 'agent' : 'deployment';
    if (written.kind === 'full') {
      return (
        `the ${where} memory holds ${written.notes} notes, the most it may (tools.memory.max_notes): ` +
        `rewrite or delete a note instead of adding "${name}"`
      );
    }
    if (written.kind === 'too_big') {
      return (
        `the ${where} memory would hold ${written.bytes} bytes, over tools.memory.max_bytes ` +
        `(${settings.max_bytes}): shorten or delete notes first`
      );
    }
    return undefined;
  }

  return {
    ...createToolBox('memory', [remember, forget, list]),
    // What an effect asks to remember goes to the agent's own memory, held to the notes' length like a write.
    keepNote: ({ memory, ...note }) =>
      writeNote(
        memory,
        { kind: 'agent', agent: note.agent },
        { ...note, content: clipNote(note.content, settings.max_note_chars) },
      ),
    // What the agent remembers is given to it at the start of each run.
    runContext: {
      key: 'memory',
      read: async ({ agent, memory, now }) => memoryInstructions(await readMemory(memory, agent, now)),
    },
  };
}
