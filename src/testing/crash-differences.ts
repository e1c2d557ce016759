import type { LedgerEntry } from './ledger.js';
import type { RunTreeSnapshot } from './run-snapshot.js';

/** The run without faults, the oracle of every crash. */
export interface CrashTestReference {
  snapshot: RunTreeSnapshot;
  sideEffects: LedgerEntry[];
  modelCalls: number;
  durationMs: number;
}

/** One way a crashed run differs from the run without faults. */
export interface CrashDifference {
  /** The crash point (`point` or `point@N`) of the run that differs. */
  crashAt: string;
  kind:
    | 'status'
    | 'runs'
    | 'transcript'
    | 'events'
    | 'duplicate'
    | 'side_effects'
    | 'model_calls'
    | 'worker'
    | 'timeout';
  /** What differs, for a person: the reference's and the crashed run's data side by side. */
  detail: string;
}

/** Every difference between a crashed run and the reference (pure: data in, differences out). */
export function compareWithReference(input: {
  crashAt: string;
  reference: CrashTestReference;
  snapshot: RunTreeSnapshot;
  duplicates: readonly string[];
  sideEffects: readonly LedgerEntry[];
  modelCalls: number;
  allowedModelCalls: number;
  /** The steps whose model was asked more than once (`root iteration 2`), for the detail. */
  askedAgain?: readonly string[];
}): CrashDifference[] {
  const { crashAt, reference } = input;
  const differences: CrashDifference[] = [];
  const add = (kind: CrashDifference['kind'], detail: string) => differences.push({ crashAt, kind, detail });
  const expected = reference.snapshot;
  const actual = input.snapshot;
  if (expected.status !== actual.status || expected.result !== actual.result) {
    add(
      'status',
      `the run ended ${actual.status} with ${show(actual.result)}; without faults, ${expected.status} with ${show(expected.result)}`,
    );
  }
  const expectedRuns = Object.keys(expected.runs);
  const actualRuns = Object.keys(actual.runs);
  if (expected.runCount !== actual.runCount || show(expectedRuns) !== show(actualRuns)) {
    add(
      'runs',
      `runs ${show(actualRuns)} (${actual.runCount} in the session); without faults ${show(expectedRuns)} (${expected.runCount})`,
    );
  }
  for (const name of expectedRuns) {
    const want = expected.runs[name];
    const got = actual.runs[name];
    if (!want || !got) continue;
    const chat = firstDifference(want.chat, got.chat);
    if (chat !== undefined) add('transcript', `run ${name}, message ${chat}`);
    const events = multisetDifference(want.events, got.events);
    if (events !== undefined) add('events', `run ${name}: ${events}`);
  }
  for (const duplicate of input.duplicates) add('duplicate', duplicate);
  const sideEffects = multisetDifference(
    reference.sideEffects.map((entry) => show(entry)),
    input.sideEffects.map((entry) => show(entry)),
  );
  if (sideEffects !== undefined) add('side_effects', `side effects in the ledger: ${sideEffects}`);
  if (input.modelCalls > input.allowedModelCalls) {
    add(
      'model_calls',
      `${input.modelCalls} model calls; without faults ${reference.modelCalls}, and at most ${input.allowedModelCalls} allowed with the kill: a finished step asked the model again${
        input.askedAgain && input.askedAgain.length > 0
          ? ` (asked more than once: ${input.askedAgain.join(', ')})`
          : ''
      }`,
    );
  }
  return differences;
}

/** `#i: without faults … / after the crash …` for the first element that differs, or undefined. */
function firstDifference(expected: readonly unknown[], actual: readonly unknown[]): string | undefined {
  const length = Math.max(expected.length, actual.length);
  for (let index = 0; index < length; index += 1) {
    const want = index < expected.length ? show(expected[index]) : '(none)';
    const got = index < actual.length ? show(actual[index]) : '(none)';
    if (want !== got) {
      return `#${index} (of ${expected.length} without faults, ${actual.length} after the crash): without faults ${clip(want)}; after the crash ${clip(got)}`;
    }
  }
  return undefined;
}

/** What one multiset of strings has more or less than another, or undefined when they are equal. */
function multisetDifference(expected: readonly string[], actual: readonly string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const item of expected) counts.set(item, (counts.get(item) ?? 0) + 1);
  for (const item of actual) counts.set(item, (counts.get(item) ?? 0) - 1);
  const missing: string[] = [];
  const extra: string[] = [];
  for (const [item, count] of counts) {
    for (let index = 0; index < Math.abs(count); index += 1) (count > 0 ? missing : extra).push(clip(item));
  }
  if (missing.length === 0 && extra.length === 0) return undefined;
  return [
    extra.length > 0 ? `${extra.length} more than without faults: ${extra.join(', ')}` : '',
    missing.length > 0 ? `${missing.length} missing: ${missing.join(', ')}` : '',
  ]
    .filter((part) => part !== '')
    .join('; ');
}

function show(value: unknown): string {
  return JSON.stringify(value) ?? 'undefined';
}

function clip(text: string): string {
  return text.length > 400 ? `${text.slice(0, 400)}…` : text;
}
