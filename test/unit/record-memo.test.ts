import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RatchetError } from '../../src/errors/index.js';
import { recordMemo } from '../../src/schemas/record-memo.js';

const noteSchema = z.strictObject({
  v: z.literal(1),
  text: z.string(),
  tags: z.array(z.string()),
  at: z.iso.datetime(),
});

function note(text: string): string {
  return JSON.stringify({ v: 1, text, tags: ['a'], at: '2026-12-06T12:00:00.000Z' });
}

/** The same characters in another string, as a read from Redis gives them. */
function copyOf(text: string): string {
  return text.split('').join('');
}

function parseError(parse: () => unknown): RatchetError {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(RatchetError);
    return error as RatchetError;
  }
  throw new Error('the memo accepted a record that does not parse');
}

describe('a memo of records read back as JSON text', () => {
  it('parses a text once: the same characters give the same record, frozen', () => {
    const memo = recordMemo(noteSchema, 1_000_000);
    const text = note('hello');
    const first = memo.parse(text, 'note 1');
    expect(first).toStrictEqual(JSON.parse(text));
    expect(memo.parse(copyOf(text), 'note 1')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.tags)).toBe(true);
    expect(() => {
      (first.tags as string[]).push('b');
    }).toThrow(TypeError);
    // One character more is another record, parsed in full.
    const other = memo.parse(note('hello!'), 'note 2');
    expect(other).not.toBe(first);
    expect(other.text).toBe('hello!');
  });

  it('never holds a text that does not parse: every read of it fails loudly', () => {
    const memo = recordMemo(noteSchema, 1_000_000);
    const bad = JSON.stringify({ v: 1, text: 5, tags: [], at: '2026-12-06T12:00:00.000Z' });
    for (let read = 0; read < 2; read += 1) {
      const error = parseError(() => memo.parse(bad, 'note 3 of somewhere'));
      expect(error.code).toBe('record_invalid');
      expect(error.message).toContain('note 3 of somewhere');
    }
    expect(parseError(() => memo.parse('{"v":1,', 'note 4')).message).toContain('not valid JSON');
  });

  it('holds at most its bound of text, dropping the least recently used first', () => {
    // Texts of one length; room for 16 of them (a text longer than a sixteenth of the bound is never held).
    const texts = Array.from({ length: 17 }, (_, index) => note(String(index).padStart(40, '0')));
    const length = (texts[0] as string).length;
    const memo = recordMemo(noteSchema, 16 * length + length - 1);
    const held = texts.map((text, index) => memo.parse(text, `note ${index}`));
    // The 17th pushed the 1st out; the 2nd is still held.
    expect(memo.parse(texts[1] as string, 'note 1')).toBe(held[1]);
    expect(memo.parse(texts[0] as string, 'note 0')).not.toBe(held[0]);
    // Reading the 2nd again made the 3rd the least recently used: the 1st, read again, pushed it out.
    expect(memo.parse(texts[2] as string, 'note 2')).not.toBe(held[2]);
    expect(memo.parse(texts[1] as string, 'note 1')).toBe(held[1]);
  });

  it('does not hold a text longer than a sixteenth of its bound', () => {
    const text = note('y'.repeat(200));
    const memo = recordMemo(noteSchema, 15 * text.length);
    expect(memo.parse(text, 'n')).not.toBe(memo.parse(text, 'n'));
  });
});
