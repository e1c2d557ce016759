import { z } from 'zod';
import { parseJsonRecord } from '../../../schemas/parse.js';
import { defineRecordKind } from '../../../schemas/record-kinds.js';
import { defineTool, type JsonValue, type ToolContext } from '../../tool.js';
import { createToolBox, type ToolBox } from '../../toolbox.js';
import { nameSchema, sessionDataLimits } from './session-data.js';

type Scope = 'session' | 'agent';

/** A note in the session's notes hash (read back by the client face too: GET /v1/sessions/:id/notes). */
export const noteRecordSchema = z.strictObject({
  v: z.literal(1),
  content: z.string(),
  agent: z.string(),
  run_id: z.string(),
  updated_at: z.iso.datetime(),
});

const scopeInput = z
  .enum(['session', 'agent'])
  .describe('"session": shared by every agent of the session; "agent": only yours');

/** Hash field of a note: agent notes carry their agent, so an agent sees only its own. */
function fieldOf(context: ToolContext, scope: Scope, name: string): string {
  return scope === 'session' ? `session:${name}` : `agent:${context.agent}:${name}`;
}

const noteWrite = defineTool({
  name: 'note_write',
  description:
    'Writes a note that later runs of this session can read (replacing a note of the same name and scope).',
  inputSchema: z.strictObject({
    name: nameSchema('note name').describe('the name of the note'),
    content: z.string().max(sessionDataLimits.valueChars).describe('the text of the note'),
    scope: scopeInput.default('session'),
  }),
  // Writing the same note again changes nothing.
  idempotent: true,
  handler: async (context, input): Promise<JsonValue> => {
    const record = {
      v: 1,
      content: input.content,
      agent: context.agent,
      run_id: context.runId,
      updated_at: context.session.now().toISOString(),
    };
    const written = await context.session.data.writeNote(
      fieldOf(context, input.scope, input.name),
      JSON.stringify(record),
      sessionDataLimits.notes,
    );
    if (written.kind === 'full') {
      throw new Error(
        `the session holds ${written.notes} notes, the most it may: rewrite an existing note instead of adding "${input.name}"`,
      );
    }
    return { written: true, name: input.name, scope: input.scope };
  },
});

const noteRead = defineTool({
  name: 'note_read',
  description: 'Reads a note by its name.',
  inputSchema: z.strictObject({
    name: nameSchema('note name').describe('the name of the note'),
    scope: scopeInput.default('session'),
  }),
  idempotent: true,
  handler: async (context, input): Promise<JsonValue> => {
    const text = await context.session.data.readNote(fieldOf(context, input.scope, input.name));
    if (text === null) return { found: false, name: input.name, scope: input.scope };
    const note = parseJsonRecord(noteRecordSchema, text, `note "${input.name}"`);
    return {
      found: true,
      name: input.name,
      scope: input.scope,
      content: note.content,
      written_by: note.agent,
      updated_at: note.updated_at,
    };
  },
});

const noteList = defineTool({
  name: 'note_list',
  description: "Lists the session's notes and your own, by name (without their text).",
  inputSchema: z.strictObject({
    scope: z.enum(['session', 'agent']).optional().describe('only notes of this scope'),
  }),
  idempotent: true,
  handler: async (context, input): Promise<JsonValue> => {
    const fields = await context.session.data.noteFields();
    const ownPrefix = `agent:${context.agent}:`;
    const notes: { name: string; scope: Scope }[] = [];
    for (const field of fields) {
      if (field.startsWith('session:'))
        notes.push({ name: field.slice('session:'.length), scope: 'session' });
      else if (field.startsWith(ownPrefix))
        notes.push({ name: field.slice(ownPrefix.length), scope: 'agent' });
    }
    return {
      notes: notes
        .filter((note) => input.scope === undefined || note.scope === input.scope)
        .sort((a, b) => a.scope.localeCompare(b.scope) || a.name.localeCompare(b.name)),
    };
  },
});

/** `notes`: notes kept in the session, shared by its agents or private to one agent. */
export function notesToolbox(): ToolBox {
  return createToolBox('notes', [noteWrite, noteRead, noteList]);
}

defineRecordKind({ name: 'session.note', version: 1, schema: noteRecordSchema });
