import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';

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
