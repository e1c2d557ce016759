import { describe, expect, it } from 'vitest';
import { compareStreamIds } from '../../src/workflows/stream-ids.js';

describe('compareStreamIds', () => {
  it('orders by milliseconds, then sequence, as numbers (not text)', () => {
    expect(compareStreamIds('9-0', '10-0')).toBeLessThan(0);
    expect(compareStreamIds('10-0', '9-0')).toBeGreaterThan(0);
    expect(compareStreamIds('5-9', '5-10')).toBeLessThan(0);
    expect(compareStreamIds('1718000000000-3', '1718000000000-3')).toBe(0);
    // Beyond Number's safe integers: still exact.
    expect(compareStreamIds('18446744073709551615-0', '18446744073709551614-9')).toBeGreaterThan(0);
  });

  it('reads an id without a sequence as sequence 0, as Redis reads a start id', () => {
    expect(compareStreamIds('1718000000000', '1718000000000-0')).toBe(0);
    expect(compareStreamIds('1718000000000', '1718000000000-1')).toBeLessThan(0);
    expect(compareStreamIds('0-0', '0-1')).toBeLessThan(0);
  });
});
