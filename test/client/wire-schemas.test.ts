import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as server from '../../src/api/schemas.js';
import { parseLenient } from '../../src/client/lenient-parse.js';
import * as client from '../../src/client/wire-schemas.js';
import { eventKinds } from '../../src/events/event.js';
import { questionResponseSchema } from '../../src/workflows/index.js';

// The client cannot import src/api/schemas.ts (it brings the engine, Redis and Node built-ins with it), so
// src/client/wire-schemas.ts mirrors its response shapes. Each pair must describe the same JSON: a field
// the server adds, drops or retypes fails here before a client misreads it.

/** The JSON Schema of a zod schema, without descriptions and ids (an empty registry holds no metadata). */
const shapeOf = (schema: z.ZodType) =>
  z.toJSONSchema(schema, { metadata: z.registry(), unrepresentable: 'any', io: 'output' });

const pairs: Array<[string, z.ZodType, z.ZodType]> = [
  ['error body', client.errorBodySchema, server.errorBodySchema],
  ['accepted run', client.acceptedRunSchema, server.acceptedRunSchema],
  ['session', client.sessionSchema, server.sessionSchema],
  ['question', client.questionSchema, server.questionSchema],
  ['question list', client.questionListSchema, server.questionListSchema],
  ['session state', client.sessionStateSchema, server.sessionStateSchema],
  ['task list', client.sessionTaskListSchema, server.sessionTaskListSchema],
  ['note list', client.sessionNoteListSchema, server.sessionNoteListSchema],
  ['respond accepted', client.respondAcceptedSchema, server.respondAcceptedSchema],
  ['run', client.runSchema, server.runSchema],
  ['agent list', client.agentListSchema, server.agentListSchema],
  ['health', client.healthSchema, server.healthSchema],
  ['question response', client.questionResponseSchema, questionResponseSchema],
];

describe("the client's wire schemas", () => {
  it.each(pairs)('%s: the same JSON Schema as the server', (_name, ours, theirs) => {
    expect(shapeOf(ours)).toEqual(shapeOf(theirs));
  });

  it('events: each kind has the JSON Schema of the server wire event of that kind', () => {
    const serverEvents = shapeOf(server.wireEventSchema) as { oneOf?: unknown[]; anyOf?: unknown[] };
    const serverKinds = serverEvents.oneOf ?? serverEvents.anyOf ?? [];
    const clientKinds = eventKinds.map((kind) => {
      const { $schema: _version, ...shape } = shapeOf(client.wireEventSchemaOf(kind));
      return shape;
    });
    expect(clientKinds.length).toBeGreaterThan(10);
    expect(serverKinds).toEqual(clientKinds);
  });

  it('the comparison sees a difference (a renamed field, another type)', () => {
    const renamed = client.acceptedRunSchema.extend({ extra: z.string() });
    expect(shapeOf(renamed)).not.toEqual(shapeOf(server.acceptedRunSchema));
    const retyped = z.strictObject({ run_id: z.number(), session_id: z.string() });
    expect(shapeOf(retyped)).not.toEqual(shapeOf(server.acceptedRunSchema));
  });
});

describe('lenient parsing', () => {
  const base = {
    id: 'q_1',
    session_id: 'ses_0000000000000000',
    run_id: 'run_1',
    agent: 'agent',
    kind: 'approval',
    question: 'May I?',
    options: [],
    tool: { name: 'charge_card', tool_call_id: 'c1', arguments: '{}' },
    status: 'answered',
    answer: { decision: 'reject', reason: 'no' },
    answered_by: 'user',
    timeout_at: null,
    default_answer: null,
    created_at: '2026-01-01T00:00:00.000Z',
    answered_at: '2026-01-01T00:00:01.000Z',
  };

  it('drops fields a newer server adds, at any depth and inside a union, and keeps the rest', () => {
    const newer = {
      ...base,
      priority: 'high',
      tool: { ...base.tool, risk: 3 },
      answer: { ...base.answer, answered_via: 'slack' },
    };
    expect(client.questionSchema.safeParse(newer).success).toBe(false);
    const parsed = parseLenient(client.questionSchema, newer);
    expect(parsed.success && parsed.data).toEqual(base);
  });

  it('still refuses what does not fit: a missing field, another type, an unknown enum value', () => {
    const { question: _question, ...missing } = base;
    expect(parseLenient(client.questionSchema, missing).success).toBe(false);
    expect(parseLenient(client.questionSchema, { ...base, options: 'a' }).success).toBe(false);
    expect(parseLenient(client.questionSchema, { ...base, kind: 'poll', extra: 1 }).success).toBe(false);
  });
});
