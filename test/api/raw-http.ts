import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body; for an event stream (200 text/event-stream) only what arrived with the headers (''). */
  body: string;
  /** The body parsed as JSON, when it is JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: a test reads any field of the answer and asserts on it
  json: any;
  /** Milliseconds from sending the request to its status line. */
  elapsedMs: number;
}

export interface RawRequest {
  method: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
  /** The client gives up (and the promise rejects) after this long: the server did not answer. */
  timeoutMs?: number;
  /** Read an event stream to its end (one that ends: `follow=false`) instead of stopping at its headers. */
  readStream?: boolean;
}

/**
 * One request on a fresh socket of its own (no agent, no pooling), as a hostile or naive client sends it
 * (or a browser tricked by DNS rebinding): any `Host`, any body, no retry, no redirect. An event stream is answered as soon as its headers arrive; `keepStream` then keeps the
 * socket (and the server's follower) until the caller destroys it.
 */
export function rawRequest(
  baseUrl: string,
  request: RawRequest,
  options: { keepStream?: (response: IncomingMessage) => void } = {},
): Promise<RawAnswer> {
  const url = new URL(request.path, baseUrl);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      url,
      {
        method: request.method,
        agent: false,
        headers: {
          ...(request.body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(request.body) }),
          ...request.headers,
        },
      },
      (response) => {
        const elapsedMs = Date.now() - started;
        const streaming =
          response.statusCode === 200 &&
          String(response.headers['content-type']).startsWith('text/event-stream');
        if (streaming && !request.readStream) {
          clearTimeout(timer);
          if (options.keepStream) options.keepStream(response);
          else response.destroy();
          resolve({ status: 200, headers: response.headers, body: '', json: undefined, elapsedMs });
          return;
        }
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          clearTimeout(timer);
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body,
            json: jsonOf(body),
            elapsedMs,
          });
        });
        response.on('error', reject);
      },
    );
    const timeoutMs = request.timeoutMs ?? 10_000;
    const timer = setTimeout(() => {
      outgoing.destroy(new Error(`no answer to ${request.method} ${request.path} within ${timeoutMs} ms`));
    }, timeoutMs);
    outgoing.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    if (request.body !== undefined) outgoing.write(request.body);
    outgoing.end();
  });
}

function jsonOf(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Bytes written on a TCP socket as they are, for what Node's HTTP client will not send: an absolute-form
 * target, two Host headers, a malformed percent-encoding, a request line over the header limit. Send
 * `Connection: close`: the answer is whatever arrives until the server closes the socket.
 */
export function rawSocketRequest(baseUrl: string, text: string, timeoutMs = 10_000): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(url.port), url.hostname, () => socket.write(text));
    const timer = setTimeout(() => {
      socket.destroy(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      const received = Buffer.concat(chunks).toString('utf8');
      const split = received.indexOf('\r\n\r\n');
      if (split < 0) {
        reject(new Error(`no HTTP answer: ${JSON.stringify(received.slice(0, 200))}`));
        return;
      }
      const [statusLine = '', ...headerLines] = received.slice(0, split).split('\r\n');
      const headers: IncomingHttpHeaders = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const body = received.slice(split + 4);
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body,
        json: jsonOf(body),
        elapsedMs: Date.now() - started,
      });
    };
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', finish);
    // The server may reset a connection it refused while our request was still being written.
    socket.on('error', () => undefined);
  });
}
