import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  defineRecordKind,
  migrateRecord,
  oldestReadableVersion,
  parseJsonRecord,
  parseRecord,
  recordKindOf,
  recordKinds,
} from '../../src/schemas/index.js';
import '../../src/redis/worker-registry.js';

// A record kind as it would look after two changes of shape: `title` renamed to `name` (1 → 2), then `tags` added (2 → 3).
const widgetSchema = z.strictObject({ v: z.literal(3), name: z.string(), tags: z.array(z.string()) });
const widget = defineRecordKind({
  name: 'test.widget',
  version: 3,
  schema: widgetSchema,
  migrations: {
    1: ({ title, ...rest }) => ({ ...rest, name: title }),
    2: (record) => ({ ...record, tags: [] }),
  },
});

describe('record kinds', () => {
  it('are found by their schema', () => {
    expect(recordKindOf(widgetSchema)).toBe(widget);
    expect(recordKindOf(z.strictObject({ v: z.literal(1) }))).toBeUndefined();
    expect(oldestReadableVersion(widget)).toBe(1);
  });

  it('migrate a record of every older version when it is read, step by step', () => {
    expect(parseRecord(widgetSchema, { v: 1, title: 'bolt' }, 'widget w1')).toEqual({
      v: 3,
      name: 'bolt',
      tags: [],
    });
    expect(parseJsonRecord(widgetSchema, '{"v":2,"name":"nut"}', 'widget w2')).toEqual({
      v: 3,
      name: 'nut',
      tags: [],
    });
    const current = { v: 3, name: 'gear', tags: ['x'] };
    expect(parseRecord(widgetSchema, current, 'widget w3')).toEqual(current);
  });

  it('refuse a record of a newer version, saying it was written by a newer Ratchet', () => {
    expect(() =>
      parseRecord(widgetSchema, { v: 4, name: 'x', tags: [], colour: 'red' }, 'widget w4'),
    ).toThrow(
      /widget w4 is version 4 of record kind "test.widget", written by a newer Ratchet; this one reads up to version 3/,
    );
  });

  it('refuse a version older than any migration reads, and a migration that throws', () => {
    const gadgetSchema = z.strictObject({ v: z.literal(3), size: z.number() });
    defineRecordKind({
      name: 'test.gadget',
      version: 3,
      schema: gadgetSchema,
      migrations: {
        2: (record) => {
          if (typeof record.width !== 'number') throw new Error('width is not a number');
          return { v: 2, size: record.width };
        },
      },
    });
    expect(() => parseRecord(gadgetSchema, { v: 1, width: 1 }, 'gadget g1')).toThrow(
      /gadget g1 is version 1 of record kind "test.gadget"; this Ratchet reads versions 2 … 3 and has no migration from version 1/,
    );
    expect(() => parseRecord(gadgetSchema, { v: 2, width: 'wide' }, 'gadget g2')).toThrow(
      /gadget g2: the migration of record kind "test.gadget" from version 2 failed: width is not a number/,
    );
    expect(parseRecord(gadgetSchema, { v: 2, width: 7 }, 'gadget g2')).toEqual({ v: 3, size: 7 });
  });

  it('leave a value without a numeric v to its schema, which fails loudly', () => {
    expect(migrateRecord(widget, 'text', 'widget')).toBe('text');
    expect(() => parseRecord(widgetSchema, { name: 'x', tags: [] }, 'widget w0')).toThrow(
      /widget w0 does not match its schema/,
    );
  });

  it('are refused when declared wrong', () => {
    const schema = z.strictObject({ v: z.literal(2) });
    expect(() => defineRecordKind({ name: 'test.widget', version: 1, schema })).toThrow(/defined twice/);
    expect(() => defineRecordKind({ name: 'test.zero', version: 0, schema })).toThrow(/at least 1/);
    expect(() =>
      defineRecordKind({ name: 'test.late', version: 2, schema, migrations: { 2: (record) => record } }),
    ).toThrow(/a migration from version 2 cannot exist/);
    expect(() =>
      defineRecordKind({
        name: 'test.gap',
        version: 4,
        schema,
        migrations: { 1: (record) => record, 3: (record) => record },
      }),
    ).toThrow(/no migration from version 2 to 3/);
    expect(() =>
      defineRecordKind({ name: 'test.short', version: 3, schema, migrations: { 1: (record) => record } }),
    ).toThrow(/no migration from version 2 to 3/);
  });
});

describe('a worker registry entry of version 1', () => {
  it('reads as serving no contract rule kinds, so no step that needs one is handed to its worker', () => {
    const kind = recordKinds().find((each) => each.name === 'worker.registry-entry');
    if (!kind) throw new Error('no worker.registry-entry kind');
    const capabilities = {
      agents: ['clerk'],
      providers: [],
      toolboxes: [],
      tools: [],
      effects: [],
      middleware: [],
      coordinators: [],
      stop_conditions: [],
      mcp_servers: [],
    };
    const base = { bullmq_ids: ['w1'], pid: 1, started_at: '2026-01-01T00:00:00.000Z' };
    const migrated = parseRecord(kind.schema, { v: 1, ...base, capabilities }, 'entry');
    expect(migrated).toEqual({ v: 2, ...base, capabilities: { ...capabilities, contract_rules: [] } });
    // An entry of a worker that advertised nothing stays without capabilities.
    expect(parseRecord(kind.schema, { v: 1, ...base }, 'entry')).toEqual({ v: 2, ...base });
  });
});
