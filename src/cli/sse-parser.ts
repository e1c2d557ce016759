/** One message of a Server-Sent Events stream. */
export interface SseMessage {
  /** The stream's last event id when the message was dispatched (the `id:` field, sticky as in browsers). */
  id: string | undefined;
  event: string;
  data: string;
}

/**
 * An incremental parser of the `text/event-stream` format (WHATWG HTML, "Server-sent events"): feed it text
 * chunks in any split; it calls `onMessage` for each complete message. Comments (keep-alives) are skipped.
 */
export function createSseParser(onMessage: (message: SseMessage) => void): (chunk: string) => void {
  let buffer = '';
  let lastEventId: string | undefined;
  let eventType = '';
  let data: string[] = [];
  let skipLeadingNewline = false;

  const dispatch = () => {
    if (data.length > 0) onMessage({ id: lastEventId, event: eventType || 'message', data: data.join('\n') });
    data = [];
    eventType = '';
  };

  const processLine = (line: string) => {
    if (line === '') return dispatch();
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') eventType = value;
    else if (field === 'id' && !value.includes('\0')) lastEventId = value;
  };

  return (chunk: string) => {
    buffer += chunk;
    if (skipLeadingNewline && buffer.startsWith('\n')) buffer = buffer.slice(1);
    skipLeadingNewline = false;
    for (;;) {
      const end = buffer.search(/[\r\n]/);
      if (end === -1) break;
      const line = buffer.slice(0, end);
      let next = end + 1;
      if (buffer[end] === '\r') {
        if (next === buffer.length) {
          // A CR at the end of a chunk: a LF starting the next chunk belongs to it.
          skipLeadingNewline = true;
        } else if (buffer[next] === '\n') {
          next += 1;
        }
      }
      buffer = buffer.slice(next);
      processLine(line);
    }
  };
}
