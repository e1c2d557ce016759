import { describe, expect, it } from 'vitest';
import { decodeResponseBody } from '../../src/tools/builtin/http/response-body.js';

const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]);

describe('decodeResponseBody', () => {
  it('gives textual types as text, in UTF-8 by default', () => {
    expect(decodeResponseBody('text/plain', Buffer.from('grüße'))).toEqual({ body: 'grüße' });
    expect(decodeResponseBody('application/json; charset=utf-8', Buffer.from('{"a":1}'))).toEqual({
      body: '{"a":1}',
    });
    expect(decodeResponseBody('application/problem+json', Buffer.from('{}'))).toEqual({ body: '{}' });
    expect(decodeResponseBody('Application/XML', Buffer.from('<a/>'))).toEqual({ body: '<a/>' });
  });

  it('decodes the declared charset', () => {
    const latin1 = Buffer.from([0x67, 0x72, 0xfc, 0xdf, 0x65]); // "grüße" in ISO-8859-1
    expect(decodeResponseBody('text/html; charset="ISO-8859-1"', latin1)).toEqual({ body: 'grüße' });
    // An unknown label falls back to UTF-8 rather than failing the call.
    expect(decodeResponseBody('text/plain; charset=no-such-charset', Buffer.from('ok'))).toEqual({
      body: 'ok',
    });
  });

  it('gives other types as base64, bytes intact', () => {
    const decoded = decodeResponseBody('image/png', png);
    expect(decoded).toEqual({ body_base64: png.toString('base64') });
    expect(Buffer.from((decoded as { body_base64: string }).body_base64, 'base64')).toEqual(png);
    expect(decodeResponseBody('application/octet-stream', Buffer.from('abc'))).toEqual({
      body_base64: 'YWJj',
    });
  });

  it('without a content type, valid UTF-8 is text and anything else base64', () => {
    expect(decodeResponseBody(undefined, Buffer.from('plain'))).toEqual({ body: 'plain' });
    expect(decodeResponseBody('', png)).toEqual({ body_base64: png.toString('base64') });
  });
});
