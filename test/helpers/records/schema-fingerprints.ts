import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { oldestReadableVersion, type RecordKind, recordKinds } from '../../../src/schemas/index.js';

const repoRoot = resolve(import.meta.dirname, '../../..');
const srcRoot = join(repoRoot, 'src');

/**
 * The committed fingerprints: record kind → version → the fingerprint of its schema, and the package version
 * that recorded it. A fingerprint recorded by an earlier package version (a release) is frozen: Redis
 * databases hold records of that shape. One recorded by the version being made may be recorded again.
 */
export const fingerprintsPath = join(repoRoot, 'test/fixtures/records/schema-fingerprints.json');
export type CommittedFingerprints = Record<
  string,
  Record<string, { fingerprint: string; recorded_in: string }>
>;

/**
 * Files of src whose schemas have a version (`v: z.literal(`) but are not records Ratchet keeps in Redis, and
 * why: every other such file declares its kinds with `defineRecordKind`.
 */
export const unversionedRecordFiles: Readonly<Record<string, string>> = {
  'cli/run-history.ts':
    "the CLI's own history file on the user's machine: a line that does not parse is skipped, not migrated",
};

/** Every file of src (the console aside) that declares record kinds, and every file with a versioned schema. */
export function recordSourceFiles(): { declaring: string[]; versioned: string[] } {
  const files = readdirSync(srcRoot, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.startsWith('console/'))
    .sort();
  const declaring: string[] = [];
  const versioned: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(srcRoot, file), 'utf8');
    if (/\bdefineRecordKind\(\{/.test(text) && file !== 'schemas/record-kinds.ts') declaring.push(file);
    if (/\bv: z\.literal\(/.test(text)) versioned.push(file);
  }
  return { declaring, versioned };
}

/** Imports every file that declares record kinds, then lists the kinds. */
export async function declaredRecordKinds(): Promise<RecordKind[]> {
  for (const file of recordSourceFiles().declaring) {
    await import(pathToFileURL(join(srcRoot, file)).href);
  }
  return recordKinds();
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value as Record<string, unknown>)
    // Words for readers are not shape: a changed description changes no stored record.
    .filter(([key]) => key !== 'description' && key !== '$schema')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, entry]) => [key, canonical(entry)]));
}

/** The shape a schema accepts as stored (JSON Schema of its input side), hashed: equal shapes, equal prints. */
export function fingerprintOf(schema: z.ZodType): string {
  const jsonSchema = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return createHash('sha256')
    .update(JSON.stringify(canonical(jsonSchema)))
    .digest('hex')
    .slice(0, 16);
}

export interface KindPrint {
  name: string;
  version: number;
  /** The oldest version a migration reads. */
  oldest: number;
  fingerprint: string;
}

export function printsOf(kinds: readonly RecordKind[]): KindPrint[] {
  return kinds.map((kind) => ({
    name: kind.name,
    version: kind.version,
    oldest: oldestReadableVersion(kind),
    fingerprint: fingerprintOf(kind.schema),
  }));
}

/** The version in package.json: the one being made (its fixtures and fingerprints may be recorded again). */
export function packageVersionOf(): string {
  return (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
}

export function readCommittedFingerprints(): CommittedFingerprints {
  return JSON.parse(readFileSync(fingerprintsPath, 'utf8')) as CommittedFingerprints;
}

export interface FingerprintProblem {
  kind: string;
  /** `breaking`: records of an earlier version would not be read; `unrecorded`: run `npm run fixtures:record`. */
  severity: 'breaking' | 'unrecorded';
  message: string;
}

const record = 'run `npm run fixtures:record` to record it (and commit test/fixtures/records/)';

/**
 * What differs between the kinds as the code declares them and the committed fingerprints, for the package
 * version `current`. Breaking: a shape changed under a version an earlier release recorded, a version no
 * migration reads, a released kind that went away. Unrecorded (`npm run fixtures:record` fixes it): a new
 * kind or version, or a shape changed while only this unreleased version has recorded it.
 */
export function fingerprintProblems(
  prints: readonly KindPrint[],
  committed: CommittedFingerprints,
  current: string,
): FingerprintProblem[] {
  const problems: FingerprintProblem[] = [];
  for (const print of prints) {
    const known = committed[print.name];
    const stated = `record kind "${print.name}"`;
    if (!known) {
      problems.push({ kind: print.name, severity: 'unrecorded', message: `${stated} is new: ${record}` });
      continue;
    }
    const released = Object.entries(known)
      .filter(([, entry]) => entry.recorded_in !== current)
      .map(([version]) => Number(version));
    const newest = Math.max(0, ...released);
    const same = known[String(print.version)];
    if (same !== undefined && same.fingerprint !== print.fingerprint) {
      if (same.recorded_in === current) {
        problems.push({
          kind: print.name,
          severity: 'unrecorded',
          message:
            `${stated} version ${print.version} changed its shape since it was recorded in ${current}, ` +
            `which is not released yet: ${record}`,
        });
        continue;
      }
      problems.push({
        kind: print.name,
        severity: 'breaking',
        message:
          `${stated} changed its shape but is still version ${print.version}, as Ratchet ${same.recorded_in} ` +
          `wrote it (fingerprint ${same.fingerprint} is now ${print.fingerprint}): the records it wrote would ` +
          `no longer be read. Give its schema version ${newest + 1} (\`v: z.literal(${newest + 1})\` and ` +
          `\`version: ${newest + 1}\` in its defineRecordKind), add \`migrations: { ${newest}: (record) => … }\` ` +
          `turning a version ${newest} record into the new shape, then ${record}`,
      });
      continue;
    }
    if (print.version < newest) {
      problems.push({
        kind: print.name,
        severity: 'breaking',
        message: `${stated} is version ${print.version}, but version ${newest} was released: a version never goes back`,
      });
      continue;
    }
    const unread = released.filter((version) => version < print.oldest);
    if (unread.length > 0) {
      problems.push({
        kind: print.name,
        severity: 'breaking',
        message:
          `${stated} is version ${print.version} and reads versions ${print.oldest} … ${print.version}, but ` +
          `records of version ${unread.join(', ')} were written by an earlier Ratchet: add ` +
          `\`migrations: { ${unread[0]}: (record) => … }\` to its defineRecordKind`,
      });
      continue;
    }
    if (same === undefined) {
      problems.push({
        kind: print.name,
        severity: 'unrecorded',
        message: `${stated} version ${print.version} has no fingerprint yet: ${record}`,
      });
    }
  }
  const declared = new Set(prints.map((print) => print.name));
  for (const [name, versions] of Object.entries(committed)) {
    if (declared.has(name)) continue;
    const releasedIn = Object.values(versions).find((entry) => entry.recorded_in !== current)?.recorded_in;
    problems.push(
      releasedIn
        ? {
            kind: name,
            severity: 'breaking',
            message:
              `record kind "${name}" is no longer declared, but Ratchet ${releasedIn} wrote it: those records ` +
              'would not be read. Keep its defineRecordKind (with a migration to what replaces it)',
          }
        : {
            kind: name,
            severity: 'unrecorded',
            message: `record kind "${name}" is no longer declared (only ${current}, unreleased, had it): ${record}`,
          },
    );
  }
  return problems;
}

/**
 * The fingerprints with those of `current` recorded again (new kinds and versions added, changes of this
 * unreleased version replaced, its removed kinds dropped); refuses (throws, listing them) while any problem
 * is breaking, so a released shape is never recorded over.
 */
export function recordFingerprints(
  prints: readonly KindPrint[],
  committed: CommittedFingerprints,
  current: string,
): CommittedFingerprints {
  const breaking = fingerprintProblems(prints, committed, current).filter(
    (problem) => problem.severity === 'breaking',
  );
  if (breaking.length > 0) {
    throw new Error(
      `record shapes changed without a migration:\n${breaking.map((problem) => `- ${problem.message}`).join('\n')}`,
    );
  }
  const next: CommittedFingerprints = {};
  for (const [name, versions] of Object.entries(committed)) {
    const kept = Object.entries(versions).filter(([, entry]) => entry.recorded_in !== current);
    if (kept.length > 0) next[name] = Object.fromEntries(kept);
  }
  for (const print of prints) {
    const known = committed[print.name]?.[String(print.version)];
    const entry =
      known?.fingerprint === print.fingerprint
        ? known
        : { fingerprint: print.fingerprint, recorded_in: current };
    next[print.name] = { ...next[print.name], [String(print.version)]: entry };
  }
  return Object.fromEntries(Object.entries(next).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export async function writeFingerprints(): Promise<CommittedFingerprints> {
  let committed: CommittedFingerprints = {};
  try {
    committed = readCommittedFingerprints();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const next = recordFingerprints(printsOf(await declaredRecordKinds()), committed, packageVersionOf());
  writeFileSync(fingerprintsPath, `${JSON.stringify(next, null, 2)}\n`);
  return next;
}
