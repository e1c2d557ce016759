import { describe, expect, it } from 'vitest';
import { describeRun } from '../../src/cli/run-status.js';
import type { Run } from '../../src/client/index.js';

function run(fields: Partial<Run>): Run {
  return {
    id: 'run_1',
    session_id: 'ses_1',
    agent: 'assistant',
    status: 'running',
    progress: { fraction: 0.75, message: 'arithmetic done' },
    ...fields,
  } as Run;
}

describe('describeRun', () => {
  it('shows the progress of a run that goes on', () => {
    expect(describeRun(run({ status: 'running' }))).toContain('  progress    75% arithmetic done');
  });

  it('shows no progress for a completed run: its status says where it stands', () => {
    const lines = describeRun(run({ status: 'completed', result: '396' }));
    expect(lines.join('\n')).not.toContain('progress');
    expect(lines).toContain('  answer      396');
  });

  it('says where a failed or cancelled run had got to, as the past', () => {
    expect(describeRun(run({ status: 'failed' }))).toContain(
      '  progress    75% arithmetic done (when it failed)',
    );
    expect(describeRun(run({ status: 'cancelled' }))).toContain(
      '  progress    75% arithmetic done (when it was cancelled)',
    );
  });

  it('names what a run waiting for a worker needs, so an operator can start one that has it', () => {
    const lines = describeRun(
      run({
        status: 'waiting_for_worker',
        waiting_for: { since: '2026-01-01T00:00:00.000Z', missing: ['tool:crm_lookup', 'middleware:audit'] },
      }),
    );
    expect(lines).toContain('  status      waiting_for_worker');
    expect(lines).toContain(
      '  waiting for a worker with tool:crm_lookup, middleware:audit (since 2026-01-01T00:00:00.000Z)',
    );
  });

  it('says why a queued run waits for its admission (decision 0038)', () => {
    const lines = describeRun(
      run({
        status: 'queued',
        queued_reason: {
          reason: 'tenant_limit',
          message:
            'tenant acme has 3 of its 3 active runs (max_active_runs); 2 of its runs are ahead of this one',
          ahead: 2,
        },
      }),
    );
    expect(lines).toContain(
      '  queued      tenant acme has 3 of its 3 active runs (max_active_runs); 2 of its runs are ahead of this one',
    );
  });

  it('suggests the commands to answer a waiting question as the user runs the CLI', () => {
    const waiting = run({
      status: 'waiting_input',
      pending_question: {
        id: 'q-run_1-1',
        kind: 'ask_user',
        question: 'Digits or words?',
        options: ['digits', 'words'],
      } as unknown as Run['pending_question'],
    });
    expect(describeRun(waiting, 'npx ratchet')).toContain(
      '              answer with: npx ratchet answer q-run_1-1 "…" (or npx ratchet attach run_1)',
    );
  });
});
