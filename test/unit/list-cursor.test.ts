import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../src/wire/list-cursor.js';

describe('list cursors', () => {
  const runPlace = '1764089689123:run_0123456789abcdef_0123456789';
  const sessionPlace = '1764089689123:ses_0123456789abcdef';

  it('give back the place they were made from, for their own list only', () => {
    const runs = encodeCursor('runs', runPlace);
    expect(runs).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor('runs', runs)).toBe(runPlace);
    expect(decodeCursor('sessions', runs)).toBeUndefined();
    expect(decodeCursor('sessions', encodeCursor('sessions', sessionPlace))).toBe(sessionPlace);
  });

  it('refuse anything that is not a cursor a list made', () => {
    for (const cursor of [
      '',
      'garbage',
      'a'.repeat(201),
      'cjE6',
      encodeCursor('runs', '123:run_0123456789abcdef_0123456789'),
      encodeCursor('runs', `${runPlace}x`),
      `${encodeCursor('runs', runPlace)}=`,
      '!!!!',
    ])
      expect(decodeCursor('runs', cursor), cursor).toBeUndefined();
  });
});
