import { describe, expect, it } from 'vitest';
import { createSseParser, type SseMessage } from '../../src/cli/sse-parser.js';

function parseAll(chunks: string[]): SseMessage[] {
  const messages: SseMessage[] = [];
  const feed = createSseParser((message) => messages.push(message));
  for (const chunk of chunks) feed(chunk);
  return messages;
}

const stream =
  ': keep-alive\n\nid: 1-0\nevent: run_started\ndata: {"a":1}\n\nid: 2-0\nevent: progress\ndata: line one\ndata: line two\n\n';

describe('createSseParser', () => {
  it('reads id, event and data (multi-line data joined by newlines), skipping comments', () => {
    expect(parseAll([stream])).toEqual([
      { id: '1-0', event: 'run_started', data: '{"a":1}' },
      { id: '2-0', event: 'progress', data: 'line one\nline two' },
    ]);
  });

  it('gives the same messages however the text is split', () => {
    const whole = parseAll([stream]);
    for (let size = 1; size <= 7; size += 1) {
      const chunks: string[] = [];
      for (let start = 0; start < stream.length; start += size)
        chunks.push(stream.slice(start, start + size));
      expect(parseAll(chunks)).toEqual(whole);
    }
  });

  it('accepts CRLF and CR line ends, also a CRLF split between chunks', () => {
    expect(parseAll(['id: 7\r', '\ndata: x\r\n\r\ndata: y\r\r'])).toEqual([
      { id: '7', event: 'message', data: 'x' },
      { id: '7', event: 'message', data: 'y' },
    ]);
  });

  it('waits for the blank line: an unfinished message is not dispatched', () => {
    expect(parseAll(['id: 1\ndata: x\n'])).toEqual([]);
  });

  it('keeps the value after "field:" without its first space, and fields without a colon', () => {
    expect(parseAll(['data:  two spaces\ndata\n\n'])).toEqual([
      { id: undefined, event: 'message', data: ' two spaces\n' },
    ]);
  });
});
