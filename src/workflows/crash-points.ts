import { writeSync } from 'node:fs';

/**
 * Named crash points (failpoints) at each boundary of a step's life. When the environment variable
 * RATCHET_CRASH_AT names a point, the worker process SIGKILLs itself there, so crash tests hit every
 * boundary deterministically. Format: `point` or `point@N` (crash on the N-th time the point is reached),
 * several separated by commas. Never set in production.
 */
export const crashPointNames = [
  'iteration.before_results_commit',
  'iteration.after_results_commit',
  'iteration.before_model_call',
  'iteration.after_model_call',
  'iteration.after_commit',
  // An effect's after phase has decided on the reply, and the reply's commit (which records it) is not made.
  'iteration.after_effects_decided',
  'iteration.after_enqueue',
  // The answer to an effect's question (decision 0049) is in hand; its commit into the chat is not made, or is.
  'iteration.before_effect_answer_commit',
  'iteration.after_effect_answer_commit',
  'iteration.before_summary_call',
  'iteration.after_summary_call',
  'iteration.before_summary_commit',
  'iteration.after_summary_commit',
  'iteration.before_steer_commit',
  'iteration.after_steer_commit',
  'iteration.before_goals_commit',
  'iteration.after_goals_commit',
  // A remembered approval (decision 0046) has approved the call, recorded; the call's intent is not.
  'tool.after_remembered_approval',
  'tool.before_intent',
  'tool.mid_call',
  'tool.before_commit',
  'tool.before_next_iteration',
  'tool.after_commit',
  // A team's coordinator has chosen (an llm coordinator's reply is in hand), its choice not yet recorded; and
  // recorded, its members not yet started.
  'team.before_selection_commit',
  'team.after_selection_commit',
  'team.before_turn_commit',
  'team.after_turn_commit',
  // A step handed back for a capable worker (decision 0031): its run's wait recorded, and its end.
  'capability.before_wait_mark',
  'capability.after_wait_mark',
  'capability.before_resume',
  'capability.after_resume',
  // Where the API (not a worker) writes a retry or a fork with its first step (decision 0022).
  'steer.before_retry_commit',
  'steer.after_retry_commit',
  'steer.before_fork_commit',
  'steer.after_fork_commit',
  // A worker's webhook dispatcher, between reading the outbox and acknowledging it (decision 0034).
  'webhook.before_enqueue',
  'webhook.after_enqueue',
  // Where the API writes a submitted run with its first step (and its idempotency key, decision 0035).
  'submit.before_run_commit',
  'submit.after_run_commit',
  // Where a worker takes up a schedule's fire (decision 0036): its decision recorded, its run not started;
  // its run started, the fire job not completed.
  'schedule.after_decision',
  'schedule.after_run_start',
  // Where the API cancels a session's active run and starts the next in one write (on_busy: interrupt).
  'message.before_interrupt_commit',
  'message.after_interrupt_commit',
  // Fair admission (decision 0038): a run admitted, or a slot freed and runs admitted into it, and the
  // admitted runs' first steps not yet woken.
  'admission.after_admit',
  'admission.after_release',
] as const;

export type CrashPointName = (typeof crashPointNames)[number];

interface Armed {
  remaining: number;
}

function parse(spec: string | undefined): Map<string, Armed> {
  const armed = new Map<string, Armed>();
  if (!spec) return armed;
  for (const item of spec.split(',')) {
    const [name, count] = item.trim().split('@');
    if (!name) continue;
    if (!(crashPointNames as readonly string[]).includes(name)) {
      throw new Error(
        `RATCHET_CRASH_AT: unknown crash point "${name}" (known: ${crashPointNames.join(', ')})`,
      );
    }
    const remaining = count === undefined ? 1 : Number(count);
    if (!Number.isInteger(remaining) || remaining < 1) {
      throw new Error(`RATCHET_CRASH_AT: "${item.trim()}" needs a whole number of at least 1 after "@"`);
    }
    armed.set(name, { remaining });
  }
  return armed;
}

const armedPoints = parse(process.env.RATCHET_CRASH_AT);

/** Kills this process with SIGKILL if the point is armed and its count is reached; otherwise nothing. */
export function crashPoint(name: CrashPointName): void {
  const armed = armedPoints.get(name);
  if (!armed) return;
  armed.remaining -= 1;
  if (armed.remaining > 0) return;
  writeSync(2, `ratchet: crash point ${name} reached, SIGKILL\n`);
  process.kill(process.pid, 'SIGKILL');
}
