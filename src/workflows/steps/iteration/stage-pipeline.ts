import { RatchetError } from '../../../errors/index.js';
import type { CrashPointName } from '../../crash-points.js';
import type { CommitOutcome, StepAction, StepCommit } from '../runner/step-action.js';

/**
 * A pipeline of stages (the iteration's: iteration-step.ts lists them). Every stage has one signature: it
 * takes the turn and ends the step (a StepAction: park, done, a commit the step ends on …), goes on with the
 * turn grown by what it added (`next`), or commits and then decides on the result (`commitThen`), which may be
 * going on too. Stages never call one another; `runStages` turns the list into the continuation chain the
 * runner carries out (step-runner.ts), so a staged commit is one `commit` action whose `andThen` resumes the
 * list after the stage (decision 0010).
 */
export type Stage<Turn> = (turn: Turn) => StageResult<Turn> | Promise<StageResult<Turn>>;

export type StageResult<Turn> = StepAction | Next<Turn> | CommitThen<Turn, StepCommit>;

interface Next<Turn> {
  kind: 'next';
  turn: Turn;
}

interface CommitThen<Turn, Commit extends StepCommit> {
  kind: 'commit_then';
  commit: Commit;
  what: string;
  before: CrashPointName | undefined;
  after: CrashPointName | undefined;
  andThen: (result: CommitOutcome<Commit>) => StageResult<Turn> | Promise<StageResult<Turn>>;
}

/** Go on with the next stage, with this turn. */
export function next<Turn>(turn: Turn): Next<Turn> {
  return { kind: 'next', turn };
}

/** Commit this, then decide on its result: end the step, or go on with the next stage (`next`). */
export function commitThen<Turn, Commit extends StepCommit>(
  write: Commit,
  options: {
    what: string;
    before?: CrashPointName;
    after?: CrashPointName;
    andThen: (result: CommitOutcome<Commit>) => StageResult<Turn> | Promise<StageResult<Turn>>;
  },
): CommitThen<Turn, StepCommit> {
  return {
    kind: 'commit_then',
    commit: write,
    what: options.what,
    before: options.before,
    after: options.after,
    andThen: options.andThen as CommitThen<Turn, StepCommit>['andThen'],
  };
}

/** Stages run again and again, in order, as long as `condition` holds when the first would start. */
export interface Repeat<Turn> {
  kind: 'repeat';
  condition: (turn: Turn) => boolean;
  stages: readonly Stage<Turn>[];
}

export function repeatWhile<Turn>(
  condition: (turn: Turn) => boolean,
  stages: readonly Stage<Turn>[],
): Repeat<Turn> {
  return { kind: 'repeat', condition, stages };
}

/** A stage, or stages repeated. */
export type StageEntry<Turn> = Stage<Turn> | Repeat<Turn>;

/** The list flattened: a stage, a loop's test (where to go when it fails), and the jump back to the test. */
type Op<Turn> =
  | { kind: 'stage'; stage: Stage<Turn> }
  | { kind: 'test'; condition: (turn: Turn) => boolean; exit: number }
  | { kind: 'jump'; to: number };

/** Compiles the list once; `run` then takes the turn through it. */
export function pipeline<Turn>(entries: readonly StageEntry<Turn>[]): {
  run(turn: Turn): Promise<StepAction>;
} {
  const ops: Op<Turn>[] = [];
  for (const entry of entries) {
    if (typeof entry === 'function') {
      ops.push({ kind: 'stage', stage: entry });
      continue;
    }
    const test = { kind: 'test' as const, condition: entry.condition, exit: -1 };
    const start = ops.push(test) - 1;
    for (const stage of entry.stages) ops.push({ kind: 'stage', stage });
    ops.push({ kind: 'jump', to: start });
    test.exit = ops.length;
  }
  return { run: (turn) => runFrom(ops, 0, turn) };
}

/** Takes the turn through the ops from `at` on, until a stage decides how the step goes on. */
async function runFrom<Turn>(ops: readonly Op<Turn>[], at: number, start: Turn): Promise<StepAction> {
  let turn = start;
  for (let index = at; ; ) {
    const op = ops[index];
    if (!op) throw new RatchetError('internal', 'the stages ended without deciding how the step goes on');
    if (op.kind === 'test') {
      index = op.condition(turn) ? index + 1 : op.exit;
      continue;
    }
    if (op.kind === 'jump') {
      index = op.to;
      continue;
    }
    const result = await op.stage(turn);
    if (result.kind !== 'next') return settle(ops, index + 1, result);
    turn = result.turn;
    index += 1;
  }
}

/** A stage's result as the runner's action: a staged commit whose `andThen` resumes the list at `resume`. */
function settle<Turn>(
  ops: readonly Op<Turn>[],
  resume: number,
  result: StageResult<Turn>,
): StepAction | Promise<StepAction> {
  if (result.kind === 'next') return runFrom(ops, resume, result.turn);
  if (result.kind !== 'commit_then') return result;
  const { andThen } = result;
  return {
    kind: 'commit',
    commit: result.commit,
    what: result.what,
    before: result.before,
    after: result.after,
    andThen: async (outcome: never) => settle(ops, resume, await andThen(outcome)),
  };
}
