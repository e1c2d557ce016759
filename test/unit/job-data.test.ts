import { describe, expect, it } from 'vitest';
import { planRunCreation } from '../../src/workflows/core/run-creation.js';
import { iterationJobDataSchema, teamTurnJobDataSchema } from '../../src/workflows/job-data.js';

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
        v: 1,
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
