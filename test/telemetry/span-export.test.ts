import { describe, expect, it } from 'vitest';
import { otlpAttributes, unixNano } from '../../src/telemetry/span-export.js';

describe('spans in OTLP/JSON form', () => {
  it('types each attribute as OTLP does, and leaves out what JSON cannot carry', () => {
    expect(
      otlpAttributes({
        name: 'add',
        count: 3,
        ratio: 0.5,
        ok: true,
        list: ['a', null, 'b'],
        gone: undefined,
        nan: Number.NaN,
        inf: Number.POSITIVE_INFINITY,
      }),
    ).toEqual([
      { key: 'name', value: { stringValue: 'add' } },
      { key: 'count', value: { intValue: 3 } },
      { key: 'ratio', value: { doubleValue: 0.5 } },
      { key: 'ok', value: { boolValue: true } },
      { key: 'list', value: { arrayValue: { values: [{ stringValue: 'a' }, { stringValue: 'b' }] } } },
    ]);
  });

  it('writes times as nanoseconds since the epoch, to the microsecond', () => {
    expect(unixNano(1_700_000_000_123.456)).toBe('1700000000123456000');
    expect(unixNano(1_700_000_000_125)).toBe('1700000000125000000');
  });
});
