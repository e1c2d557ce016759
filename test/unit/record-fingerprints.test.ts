import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RatchetError } from '../../src/errors/index.js';
import { migrateRecord, parseJsonRecord, type RecordKind } from '../../src/schemas/index.js';
import { runRecordSchema } from '../../src/workflows/run-record.js';
import { fixtureRecords } from '../helpers/records/fixture-records.js';
import { fixtureVersions, readFixture, recordsRoot } from '../helpers/records/record-fixtures.js';
import {
  declaredRecordKinds,
  fingerprintOf,
  fingerprintProblems,
  packageVersionOf,
  printsOf,
  readCommittedFingerprints,
  recordFingerprints,
  recordSourceFiles,
  unversionedRecordFiles,
} from '../helpers/records/schema-fingerprints.js';

const kinds = await declaredRecordKinds();
/** The version being made (package.json), and one made after every version that recorded fingerprints. */
const current = packageVersionOf();
const later = 'a later version';
/** The version that recorded `kind`'s version 1 (an earlier release, or this one before it is released). */
const recordedIn = (kind: string): string => readCommittedFingerprints()[kind]?.['1']?.recorded_in ?? current;
const kindByName = new Map(kinds.map((kind) => [kind.name, kind]));

function kindNamed(name: string): RecordKind {
  const kind = kindByName.get(name);
  if (!kind) throw new Error(`no record kind ${name}`);
  return kind;
}

/** The `v` values a schema accepts, from its JSON Schema (each member of a union). */
function versionsAccepted(schema: z.ZodType): unknown[] {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const members = (json.anyOf ?? json.oneOf ?? [json]) as { properties?: { v?: { const?: unknown } } }[];
  return [...new Set(members.map((member) => member.properties?.v?.const))];
}

describe('persisted record shapes', () => {
  it('are declared as record kinds wherever a schema carries a version', () => {
    const { declaring, versioned } = recordSourceFiles();
    const undeclared = versioned.filter(
      (file) => !declaring.includes(file) && !(file in unversionedRecordFiles),
    );
    expect(
      undeclared,
      'declare each with defineRecordKind (src/schemas/record-kinds.ts) beside its schema',
    ).toEqual([]);
    expect(Object.keys(unversionedRecordFiles).filter((file) => !versioned.includes(file))).toEqual([]);
  });

  it('accept exactly the version their kind declares', () => {
    expect(kinds.length).toBeGreaterThan(20);
    for (const kind of kinds) expect(versionsAccepted(kind.schema), kind.name).toEqual([kind.version]);
  });

  it('match the committed fingerprints (a changed shape needs a new version and a migration)', () => {
    const problems = fingerprintProblems(printsOf(kinds), readCommittedFingerprints(), current);
    expect(problems.map((problem) => problem.message)).toEqual([]);
  });

  it('are read from the records every checked-in version wrote', () => {
    const versions = fixtureVersions();
    expect(versions.map(({ version }) => version)).toContain('0.2.0');
    const seen = new Set<string>();
    for (const { version, files } of versions) {
      for (const file of files) {
        const { records, unplaced } = fixtureRecords(readFixture(version, file));
        expect(unplaced, `${version}/${file}: versioned records of no known kind`).toEqual([]);
        for (const record of records) {
          parseJsonRecord(kindNamed(record.kind).schema, record.text, `${version}/${file}: ${record.where}`);
          seen.add(record.kind);
        }
      }
    }
    // The scenarios reach the records a run's life writes.
    for (const kind of ['run', 'session', 'question', 'chat.entry', 'event', 'job.iteration', 'job.tool']) {
      expect(seen, kind).toContain(kind);
    }
    for (const kind of [
      'journal.reply',
      'journal.tool-intent',
      'journal.tool-outcome',
      'session.task',
      'session.note',
    ]) {
      expect(seen, kind).toContain(kind);
    }
  });
});

describe('a record shape changed without a migration', () => {
  const runRecordsOf = () =>
    fixtureVersions().flatMap(({ version, files }) =>
      files.flatMap((file) =>
        fixtureRecords(readFixture(version, file)).records.filter((record) => record.kind === 'run'),
      ),
    );
  // What a change would be: the run record gains a required field.
  const changedSchema = runRecordSchema.extend({ owner: z.string() });

  const changedPrints = () =>
    printsOf(kinds).map((print) =>
      print.name === 'run' ? { ...print, fingerprint: fingerprintOf(changedSchema) } : print,
    );

  it('is reported by the fingerprint check of the next version, saying what to do', () => {
    const prints = changedPrints();
    const problems = fingerprintProblems(prints, readCommittedFingerprints(), later);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ kind: 'run', severity: 'breaking' });
    expect(problems[0]?.message).toMatch(
      new RegExp(
        `record kind "run" changed its shape but is still version 1, as Ratchet ${recordedIn('run')} wrote it`,
      ),
    );
    expect(problems[0]?.message).toContain('Give its schema version 2 (`v: z.literal(2)` and `version: 2`');
    expect(problems[0]?.message).toContain('add `migrations: { 1: (record) => … }`');
    expect(problems[0]?.message).toContain('npm run fixtures:record');
    // And the recorder refuses to write the new shape over the old one's fingerprint.
    expect(() => recordFingerprints(prints, readCommittedFingerprints(), later)).toThrow(
      /changed without a migration/,
    );
  });

  it('in the version that recorded it, not released yet, fails the check until it is recorded again', () => {
    const committed = readCommittedFingerprints();
    // As that version saw it before its release (it may be this one).
    const unreleased = recordedIn('run');
    const problems = fingerprintProblems(changedPrints(), committed, unreleased);
    expect(problems).toEqual([
      {
        kind: 'run',
        severity: 'unrecorded',
        message: expect.stringContaining(
          `changed its shape since it was recorded in ${unreleased}, which is not released`,
        ),
      },
    ]);
    const recorded = recordFingerprints(changedPrints(), committed, unreleased);
    expect(recorded.run).toEqual({
      '1': { fingerprint: fingerprintOf(changedSchema), recorded_in: unreleased },
    });
  });

  it('fails on the records the previous version wrote', () => {
    const records = runRecordsOf();
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) {
      const value: unknown = JSON.parse(record.text);
      const parsed = changedSchema.safeParse(value);
      expect(parsed.success, record.where).toBe(false);
    }
  });

  it('with a new version and its migration, reads them, and only waits to be recorded', () => {
    const bumpedSchema = changedSchema.extend({ v: z.literal(2) });
    const bumped: RecordKind = {
      name: 'run',
      version: 2,
      schema: bumpedSchema,
      migrations: { 1: (record) => ({ ...record, owner: 'nobody' }) },
    };
    for (const record of runRecordsOf()) {
      const migrated = migrateRecord(bumped, JSON.parse(record.text), record.where);
      expect(bumpedSchema.parse(migrated)).toMatchObject({ v: 2, owner: 'nobody' });
    }
    const prints = printsOf(kinds).map((print) =>
      print.name === 'run'
        ? { ...print, version: 2, oldest: 1, fingerprint: fingerprintOf(bumpedSchema) }
        : print,
    );
    const committed = readCommittedFingerprints();
    const problems = fingerprintProblems(prints, committed, later);
    expect(problems).toEqual([
      {
        kind: 'run',
        severity: 'unrecorded',
        message: expect.stringContaining(
          'record kind "run" version 2 has no fingerprint yet: run `npm run fixtures:record`',
        ),
      },
    ]);
    const recorded = recordFingerprints(prints, committed, later);
    expect(recorded.run).toEqual({
      '1': committed.run?.['1'],
      '2': { fingerprint: fingerprintOf(bumpedSchema), recorded_in: later },
    });
    expect(fingerprintProblems(prints, recorded, later)).toEqual([]);
  });

  it('with a new version but no migration, is reported', () => {
    const prints = printsOf(kinds).map((print) =>
      print.name === 'run' ? { ...print, version: 2, oldest: 2, fingerprint: 'f'.repeat(16) } : print,
    );
    expect(fingerprintProblems(prints, readCommittedFingerprints(), later)).toEqual([
      {
        kind: 'run',
        severity: 'breaking',
        message: expect.stringContaining(
          'records of version 1 were written by an earlier Ratchet: add `migrations: { 1:',
        ),
      },
    ]);
  });

  it('or a kind removed, is reported', () => {
    const prints = printsOf(kinds).filter((print) => print.name !== 'journal.marker');
    expect(fingerprintProblems(prints, readCommittedFingerprints(), later)).toMatchObject([
      {
        kind: 'journal.marker',
        severity: 'breaking',
        message: expect.stringContaining('no longer declared'),
      },
    ]);
    // Before any release wrote it (as the version that recorded it saw it), it may go: recording again drops it.
    const unreleased = recordedIn('journal.marker');
    expect(fingerprintProblems(prints, readCommittedFingerprints(), unreleased)).toMatchObject([
      { kind: 'journal.marker', severity: 'unrecorded' },
    ]);
    expect(recordFingerprints(prints, readCommittedFingerprints(), unreleased)).not.toHaveProperty(
      'journal.marker',
    );
  });

  it('a record that does not parse still fails loudly with record_invalid', () => {
    const [record] = runRecordsOf();
    const broken = JSON.stringify({ ...JSON.parse(record?.text ?? '{}'), status: 'sleeping' });
    expect(() => parseJsonRecord(runRecordSchema, broken, 'run r')).toThrow(RatchetError);
  });
});

it('keeps every fixture folder with its README', () => {
  for (const { version } of fixtureVersions()) {
    expect(readdirSync(join(recordsRoot, version))).toContain('README.md');
  }
});
