import { describe, expect, it } from 'vitest';
import { href, parseRoute } from '../../src/console/router.js';
import { safeHttpUrl, textAndLinks, visibleText } from '../../src/console/safe-text.js';

// The console's pure helpers: which model text becomes a link, which characters are shown escaped, and how
// a hash names a page (src/console/safe-text.ts, router.ts).

describe('console text', () => {
  it('links only http(s) URLs; javascript:, data:, file: and the rest stay text', () => {
    expect(safeHttpUrl('https://example.com/a?b=c')).toBe('https://example.com/a?b=c');
    expect(safeHttpUrl('http://127.0.0.1:8080/')).toBe('http://127.0.0.1:8080/');
    for (const hostile of [
      'javascript:alert(1)',
      'JavaScript:alert(1)',
      ' javascript:alert(1)',
      'java\tscript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
      '//evil.example/x',
      'not a url',
    ]) {
      expect(safeHttpUrl(hostile), hostile).toBeUndefined();
    }
  });

  it('cuts model text into text and links, leaving trailing punctuation and other schemes as text', () => {
    expect(textAndLinks('See https://example.com/docs. Or [x](javascript:alert(1)) <b>hi</b>')).toEqual([
      { text: 'See ' },
      { url: 'https://example.com/docs' },
      { text: '. Or [x](javascript:alert(1)) <b>hi</b>' },
    ]);
    expect(textAndLinks('(http://a.example/x)')).toEqual([
      { text: '(' },
      { url: 'http://a.example/x' },
      { text: ')' },
    ]);
    expect(textAndLinks('no links here')).toEqual([{ text: 'no links here' }]);
    // In JSON text a URL is followed by an escaped quote: the backslash is not part of the link.
    expect(textAndLinks('{"u": "https://a.example/x\\"}')).toEqual([
      { text: '{"u": "' },
      { url: 'https://a.example/x' },
      { text: '\\"}' },
    ]);
  });

  it('shows bidi overrides, isolates and marks escaped, and leaves other text alone', () => {
    expect(visibleText('invoice\u202Efdp.exe')).toBe('invoice\\u202Efdp.exe');
    expect(visibleText('\u2066a\u2069 \u200F \u061C')).toBe('\\u2066a\\u2069 \\u200F \\u061C');
    expect(visibleText('héllo — 日本 <script>')).toBe('héllo — 日本 <script>');
  });
});

describe('console routes', () => {
  it('reads the hash of each page, with its id and query', () => {
    expect(parseRoute('')).toEqual({ page: 'runs', params: {} });
    expect(parseRoute('#/runs?status=failed&agent=a%20b')).toEqual({
      page: 'runs',
      params: { status: 'failed', agent: 'a b' },
    });
    expect(parseRoute('#/runs/run_x')).toEqual({ page: 'run', params: { id: 'run_x' } });
    expect(parseRoute('#/sessions/ses_x')).toEqual({ page: 'session', params: { id: 'ses_x' } });
    expect(parseRoute('#/inbox')).toEqual({ page: 'inbox', params: {} });
    expect(parseRoute('#/system')).toEqual({ page: 'system', params: {} });
    expect(parseRoute('#/runs/a/b').page).toBe('not_found');
    expect(parseRoute('#/runs/%E0%A4%A').page).toBe('not_found');
    expect(parseRoute('#/elsewhere').page).toBe('not_found');
  });

  it('writes a hash the router reads back, leaving empty filters out', () => {
    const hash = href(['runs'], { status: 'failed', agent: '', q: 'run_a&b' });
    expect(hash).toBe('#/runs?status=failed&q=run_a%26b');
    expect(parseRoute(hash)).toEqual({ page: 'runs', params: { status: 'failed', q: 'run_a&b' } });
    expect(parseRoute(href(['runs', 'run/1']))).toEqual({ page: 'run', params: { id: 'run/1' } });
  });
});
