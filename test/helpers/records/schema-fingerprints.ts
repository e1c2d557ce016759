import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { oldestReadableVersion, type RecordKind, recordKinds } from '../../../src/schemas/index.js';

const repoRoot = resolve(import.meta.dirname, '../../..');
const srcRoot = join(repoRoot, 'src');

/** The committed fingerprints: record kind → version → fingerprint of its schema. */
export const fingerprintsPath = join(repoRoot, 'test/fixtures/records/schema-fingerprints.json');
export type CommittedFingerprints = Record<string, Record<string, string>>;

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
 * What differs between the kinds as the code declares them and the committed fingerprints. A changed shape
 * under the same version, a version no migration reads, a kind that went away: breaking. A new version or
 * kind not yet recorded: unrecorded.
 */
export function fingerprintProblems(
  prints: readonly KindPrint[],
  committed: CommittedFingerprints,
): FingerprintProblem[] {
  const problems: FingerprintProblem[] = [];
  for (const print of prints) {
    const known = committed[print.name];
    const stated = `record kind "${print.name}"`;
    if (!known) {
      problems.push({ kind: print.name, severity: 'unrecorded', message: `${stated} is new: ${record}` });
      continue;
    }
    const versions = Object.keys(known).map(Number);
    const newest = Math.max(...versions);
    const same = known[String(print.version)];
    if (same !== undefined && same !== print.fingerprint) {
      problems.push({
        kind: print.name,
        severity: 'breaking',
        message:
          `${stated} changed its shape but is still version ${print.version} (fingerprint ${same} is now ` +
          `${print.fingerprint}): records an earlier Ratchet wrote would no longer be read. Give its schema ` +
          `version ${newest + 1} (\`v: z.literal(${newest + 1})\` and \`version: ${newest + 1}\` in its ` +
          `defineRecordKind), add \`migrations: { ${newest}: (record) => … }\` turning a version ${newest} ` +
          `record into the new shape, then ${record}`,
      });
      continue;
    }
    if (print.version < newest) {
      problems.push({
        kind: print.name,
        severity: 'breaking',
        message: `${stated} is version ${print.version}, but version ${newest} was recorded: a version never goes back`,
      });
      continue;
    }
    const unread = versions.filter((version) => version < print.oldest);
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
  for (const name of Object.keys(committed)) {
    if (declared.has(name)) continue;
    problems.push({
      kind: name,
      severity: 'breaking',
      message:
        `record kind "${name}" has fingerprints but is no longer declared: records of it that an earlier ` +
        'Ratchet wrote would not be read. Keep its defineRecordKind (with a migration to what replaces it)',
    });
  }
  return problems;
}

/**
 * Adds the fingerprints of versions and kinds not recorded yet; refuses (throws, listing them) while any
 * problem is breaking, so a changed shape is never recorded over its old fingerprint.
 */
export function recordFingerprints(
  prints: readonly KindPrint[],
  committed: CommittedFingerprints,
): CommittedFingerprints {
  const breaking = fingerprintProblems(prints, committed).filter(
    (problem) => problem.severity === 'breaking',
  );
  if (breaking.length > 0) {
    throw new Error(
      `record shapes changed without a migration:\n${breaking.map((problem) => `- ${problem.message}`).join('\n')}`,
    );
  }
  const next: CommittedFingerprints = structuredClone(committed);
  for (const print of prints) {
    next[print.name] = { ...next[print.name], [String(print.version)]: print.fingerprint };
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
  const next = recordFingerprints(printsOf(await declaredRecordKinds()), committed);
  writeFileSync(fingerprintsPath, `${JSON.stringify(next, null, 2)}\n`);
  return next;
}
