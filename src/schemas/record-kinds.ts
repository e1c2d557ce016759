import type { z } from 'zod';
import { RatchetError } from '../errors/index.js';

/**
 * Persisted records are versioned (DESIGN rule 12, decision 0037): each kind of record declares the version
 * this code writes and, for every older version a Ratchet once wrote, the migration to the next one. A record
 * is migrated when it is read (`parseRecord` looks its schema up here), so a worker of the next version
 * finishes what the previous one left; it is written back only in the current version.
 */

/** Turns a record of version n (its `v` is n) into the shape of version n + 1; the caller sets `v`. */
export type RecordMigration = (record: Record<string, unknown>) => Record<string, unknown>;

export interface RecordKind<Schema extends z.ZodType = z.ZodType> {
  /** Stable, unique: `run`, `journal.reply`, `job.tool` … (test/fixtures/records/schema-fingerprints.json). */
  readonly name: string;
  /** The version this code writes: the `v` its schema accepts. */
  readonly version: number;
  readonly schema: Schema;
  /** `migrations[n]` reads version n into version n + 1; every version from the oldest kept to `version - 1`. */
  readonly migrations: Readonly<Record<number, RecordMigration>>;
}

const kindsByName = new Map<string, RecordKind>();
const kindsBySchema = new WeakMap<z.ZodType, RecordKind>();

/**
 * Declares a kind of persisted record, beside its schema. Throws at import when the definition is wrong (a
 * name taken by another schema, a migration outside 1 … version - 1, a gap between migrations).
 */
export function defineRecordKind<Schema extends z.ZodType>(definition: {
  name: string;
  version: number;
  schema: Schema;
  migrations?: Readonly<Record<number, RecordMigration>>;
}): RecordKind<Schema> {
  const { name, version, schema } = definition;
  const migrations = definition.migrations ?? {};
  const taken = kindsByName.get(name);
  if (taken) {
    if (taken.schema === schema && taken.version === version) return taken as RecordKind<Schema>;
    throw new Error(`record kind "${name}" is defined twice: give each kind of record its own name`);
  }
  if (!Number.isInteger(version) || version < 1) {
    throw new Error(`record kind "${name}": version must be a whole number of at least 1, not ${version}`);
  }
  const from = Object.keys(migrations)
    .map(Number)
    .sort((a, b) => a - b);
  for (const [index, start] of from.entries()) {
    if (!Number.isInteger(start) || start < 1 || start >= version) {
      throw new Error(
        `record kind "${name}" (version ${version}): a migration from version ${start} cannot exist; ` +
          `migrations go from 1 … ${version - 1} to the next version`,
      );
    }
    if (index > 0 && start !== (from[index - 1] ?? 0) + 1) {
      throw new Error(`record kind "${name}": no migration from version ${start - 1} to ${start}`);
    }
  }
  if (from.length > 0 && from.at(-1) !== version - 1) {
    throw new Error(`record kind "${name}": no migration from version ${version - 1} to ${version}`);
  }
  const kind: RecordKind<Schema> = { name, version, schema, migrations };
  kindsByName.set(name, kind);
  kindsBySchema.set(schema, kind);
  return kind;
}

/** The kind a schema was declared for, if any. */
export function recordKindOf(schema: z.ZodType): RecordKind | undefined {
  return kindsBySchema.get(schema);
}

/** Every kind declared so far (by the modules imported so far), by name. */
export function recordKinds(): RecordKind[] {
  return [...kindsByName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The oldest version of the kind this code still reads. */
export function oldestReadableVersion(kind: RecordKind): number {
  const from = Object.keys(kind.migrations).map(Number);
  return from.length === 0 ? kind.version : Math.min(...from);
}

/**
 * A record as read, brought to the kind's version by its migrations. A value that is not an object with a
 * numeric `v` is returned as it is (its schema then says what is wrong). A record of a newer version fails
 * with record_too_new (retryable: a newer worker takes the step), one of an older version without a
 * migration with record_invalid: it is never read as something it is not.
 */
export function migrateRecord(kind: RecordKind, value: unknown, what: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const stored = (value as { v?: unknown }).v;
  if (typeof stored !== 'number' || !Number.isInteger(stored) || stored === kind.version) return value;
  if (stored > kind.version) {
    throw new RatchetError(
      'record_too_new',
      `${what} is version ${stored} of record kind "${kind.name}", written by a newer Ratchet; this one reads ` +
        `up to version ${kind.version}. Run the newer version on every worker and API (docs/operations.md, ` +
        '"Upgrading Ratchet")',
    );
  }
  let record = value as Record<string, unknown>;
  for (let version = stored; version < kind.version; version += 1) {
    const migrate = kind.migrations[version];
    if (!migrate) {
      throw new RatchetError(
        'record_invalid',
        `${what} is version ${stored} of record kind "${kind.name}"; this Ratchet reads versions ` +
          `${oldestReadableVersion(kind)} … ${kind.version} and has no migration from version ${version}`,
      );
    }
    try {
      record = { ...migrate(record), v: version + 1 };
    } catch (error) {
      throw new RatchetError(
        'record_invalid',
        `${what}: the migration of record kind "${kind.name}" from version ${version} failed: ` +
          `${(error as Error).message}`,
        { cause: error },
      );
    }
  }
  return record;
}
