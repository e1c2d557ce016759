import { describe, expect, it } from 'vitest';
import { parseRecord } from '../../src/schemas/index.js';
import { planRunCreation } from '../../src/workflows/core/run-creation.js';
import {
  iterationJobDataSchema,
  teamTurnJobDataSchema,
  toolJobDataSchema,
} from '../../src/workflows/job-data.js';

const base = {
  sessionId: 'ses_0123456789abcdef',
  runId: 'run_0123456789abcdef_abcdefghjk',
  agent: 'newsroom',
  chatId: 'main',
  parts: [{ type: 'text' as const, text: 'write' }],
  newSession: undefined,
  chatLength: 0,
  now: '2024-05-01T12:00:00.000Z',
};

describe('the first step of a run', () => {
  it("an agent's run starts with iteration 1, which has no tool results to append", () => {
    const { first } = planRunCreation(base);
    expect(first.kind).toBe('iteration');
    expect(iterationJobDataSchema.parse(first.data)).toMatchObject({ iteration: 1, previous_calls: 0 });
  });

  it("a team's run starts with turn 1, whose job data has no iteration fields", () => {
    const { first } = planRunCreation({ ...base, team: true });
    expect(first).toEqual({
      kind: 'team-turn',
      data: {
        v: 2,
        session_id: base.sessionId,
        run_id: base.runId,
        agent: 'newsroom',
        chat_id: 'main',
        iteration: 1,
      },
    });
    expect(teamTurnJobDataSchema.parse(first.data)).toEqual(first.data);
  });

  it('a team turn queued by an earlier version (previous_calls: 0) still parses; other iteration fields do not', () => {
    const earlier = { ...planRunCreation({ ...base, team: true }).first.data, previous_calls: 0 };
    expect(teamTurnJobDataSchema.parse(earlier)).toEqual(earlier);
    expect(teamTurnJobDataSchema.safeParse({ ...earlier, previous_calls: 2 }).success).toBe(false);
    expect(teamTurnJobDataSchema.safeParse({ ...earlier, group: 'g' }).success).toBe(false);
  });
});

describe('what a run inherits (decision 0047)', () => {
  const hash = 'a'.repeat(32);
  const child = { ...base, agent: 'helper', lineage: ['boss'] };

  it("is carried by a run's first step when its lineage has one definition per agent above it", () => {
    const inherited = { lineage: [hash], delegate_default: true };
    const { first } = planRunCreation({ ...child, inherited });
    expect(iterationJobDataSchema.parse(first.data)).toMatchObject({ lineage: ['boss'], inherited });
    // A lineage the definitions do not match is not recorded: the run's workers' config decides, as before.
    const mismatched = planRunCreation({ ...child, inherited: { lineage: [], delegate_default: true } });
    expect(mismatched.first.data).not.toHaveProperty('inherited');
  });

  it('is bounded and checked: a hash is 32 hex digits', () => {
    const { first } = planRunCreation(child);
    const bad = { ...first.data, inherited: { lineage: ['not-a-hash'], delegate_default: true } };
    expect(iterationJobDataSchema.safeParse(bad).success).toBe(false);
    const deep = { ...first.data, inherited: { lineage: Array(102).fill(hash), delegate_default: false } };
    expect(iterationJobDataSchema.safeParse(deep).success).toBe(false);
  });

  it('a version 1 job, queued before it was recorded, reads as version 2 without it', () => {
    const { first } = planRunCreation(child);
    const v1 = { ...first.data, v: 1 };
    expect(parseRecord(iterationJobDataSchema, v1, 'job')).toEqual({ ...first.data, v: 2 });
    const tool = { ...v1, index: 0, calls: 1, tool_name: 'add', reply_index: 1 };
    delete (tool as Record<string, unknown>).previous_calls;
    expect(parseRecord(toolJobDataSchema, tool, 'job')).toMatchObject({ v: 2, tool_name: 'add' });
    expect(parseRecord(toolJobDataSchema, tool, 'job')).not.toHaveProperty('inherited');
  });
});
