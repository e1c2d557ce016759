import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import {
  checkDestination,
  type Destination,
  type DestinationPolicy,
  pinnedLookup,
  type Resolver,
} from './ssrf-guard.js';

export interface GuardedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface GuardedFetchOptions {
  policy: DestinationPolicy;
  resolve: Resolver;
  maxRedirects: number;
  maxResponseBytes: number;
  /**
   * Request headers (lower case) still sent after a redirect leaves the origin; every other one is dropped
   * there. Authorization, cookies and proxy credentials are dropped even when listed.
   */
  forwardHeadersOnRedirect: readonly string[];
  signal: AbortSignal;
  /**
   * Called before the body holds `total` bytes (the browser's bytes in flight): a promise pauses the body
   * until it resolves; a rejection, or a throw, fails the request with that error.
   */
  holdBody?: (total: number) => Promise<void> | undefined;
}

export interface GuardedResponse {
  /** The URL that answered (after redirects). */
  url: string;
  status: number;
  headers: Record<string, string>;
  /** The body's bytes, as they came (see decodeResponseBody). */
  body: Buffer;
  /** The body was cut at maxResponseBytes. */
  truncated: boolean;
  /** Every URL redirected to, in order. */
  redirects: string[];
}

const redirectStatuses = new Set([301, 302, 303, 307, 308]);
/** Sent only to the origin the model addressed, whatever forwardHeadersOnRedirect says. */
const credentialHeaders = new Set(['authorization', 'cookie', 'proxy-authorization']);
/** Headers that describe the body (the fetch standard's request-body-header names): they go with it. */
const bodyHeaders = new Set(['content-type', 'content-encoding', 'content-language', 'content-location']);

/**
 * Sends one HTTP request and follows redirects by hand, checking the destination of every hop (host
 * allow-list, resolved addresses) before connecting, and connecting only to the addresses checked.
 */
export async function guardedFetch(
  request: GuardedRequest,
  options: GuardedFetchOptions,
): Promise<GuardedResponse> {
  let url = httpUrl(request.url, 'url');
  let method = request.method;
  let body = request.body;
  let headers = { ...request.headers };
  const redirects: string[] = [];
  for (;;) {
    const destination = await checkDestination(url, options.policy, options.resolve, options.signal);
    const response = await sendOnce({ url, method, headers, body, destination }, options);
    const location = response.headers.location;
    if (!redirectStatuses.has(response.status) || location === undefined) {
      return { ...response, url: url.href, redirects };
    }
    if (redirects.length >= options.maxRedirects) {
      throw new Error(
        `too many redirects: more than ${options.maxRedirects} (tools.http.max_redirects); the last pointed to ${location}`,
      );
    }
    const next = httpUrl(new URL(location, url).href, `redirect from ${url.href}`);
    // Any header may carry a credential (X-Api-Key, X-Auth-Token ...): another origin gets only those
    // declared harmless, never credentials.
    if (next.origin !== url.origin) headers = onlyForwardable(headers, options.forwardHeadersOnRedirect);
    // As browsers do (fetch standard, HTTP-redirect fetch): a 303, and a 301/302 after a POST, become a GET
    // without the body, and the headers describing that body go with it.
    const becomesGet =
      (response.status === 303 && method !== 'HEAD') ||
      ((response.status === 301 || response.status === 302) && method === 'POST');
    if (becomesGet) {
      method = 'GET';
      body = undefined;
      headers = without(headers, bodyHeaders);
    }
    redirects.push(next.href);
    url = next;
  }
}

interface Hop {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
  destination: Destination;
}

export type HopResponse = Omit<GuardedResponse, 'url' | 'redirects'>;

/**
 * Sends one request without following a redirect (a 3xx comes back with its location and no body), after
 * checking its destination as guardedFetch checks every hop: for a client that follows redirects itself
 * and asks again for each (the browser toolbox, whose every request the page makes comes through here).
 */
export async function guardedHop(
  request: GuardedRequest,
  options: Omit<GuardedFetchOptions, 'maxRedirects' | 'forwardHeadersOnRedirect'>,
): Promise<HopResponse> {
  const url = httpUrl(request.url, 'url');
  const destination = await checkDestination(url, options.policy, options.resolve, options.signal);
  return sendOnce(
    { url, method: request.method, headers: request.headers, body: request.body, destination },
    options,
  );
}

function sendOnce(
  hop: Hop,
  options: Pick<GuardedFetchOptions, 'maxResponseBytes' | 'signal' | 'holdBody'>,
): Promise<HopResponse> {
  return new Promise((resolve, reject) => {
    const transport = hop.url.protocol === 'https:' ? https : http;
    const { hostname } = hop.destination;
    const request = transport.request({
      protocol: hop.url.protocol,
      hostname,
      ...(hop.url.port === '' ? {} : { port: Number(hop.url.port) }),
      path: `${hop.url.pathname}${hop.url.search}`,
      method: hop.method,
      headers: {
        ...hop.headers,
        ...(hop.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(hop.body)) }),
      },
      lookup: pinnedLookup(hop.destination),
      // A fresh connection per hop: a pooled socket could belong to an earlier, differently checked request.
      agent: false,
      signal: options.signal,
      ...(hop.url.protocol === 'https:' && isIP(hostname) === 0 ? { servername: hostname } : {}),
    });
    request.once('error', reject);
    request.once('response', (response) => {
      const status = response.statusCode ?? 0;
      const headers = flattenHeaders(response.headers);
      if (redirectStatuses.has(status) && headers.location !== undefined) {
        response.resume();
        resolve({ status, headers, body: Buffer.alloc(0), truncated: false });
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = (truncated: boolean) =>
        resolve({ status, headers, body: Buffer.concat(chunks, size), truncated });
      const keep = (chunk: Buffer) => {
        const room = options.maxResponseBytes - size;
        if (chunk.length <= room) {
          chunks.push(chunk);
          size += chunk.length;
          return;
        }
        chunks.push(chunk.subarray(0, room));
        size += room;
        finish(true);
        request.destroy();
      };
      let pending: Promise<void> | undefined;
      const fail = (error: unknown) => {
        reject(error);
        request.destroy();
      };
      response.on('data', (chunk: Buffer) => {
        let waiting: Promise<void> | undefined;
        try {
          waiting = options.holdBody?.(Math.min(size + chunk.length, options.maxResponseBytes));
        } catch (error) {
          fail(error);
          return;
        }
        if (waiting === undefined) {
          keep(chunk);
          return;
        }
        response.pause();
        pending = waiting.then(() => {
          pending = undefined;
          keep(chunk);
          response.resume();
        }, fail);
      });
      // The last chunk may still wait for room: the body is whole once it is kept.
      response.once('end', () => {
        if (pending === undefined) finish(false);
        else void pending.then(() => finish(false));
      });
      response.once('error', reject);
    });
    request.end(hop.body);
  });
}

function httpUrl(text: string, field: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`${field}: "${text}" is not an absolute URL (e.g. https://example.com/path)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`${field}: only http and https URLs are allowed, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new Error(`${field}: credentials in the URL are not allowed; send an authorization header instead`);
  }
  return url;
}

/**
 * One value per header name: repeated headers joined by ", ", except Set-Cookie, whose values are joined by
 * newlines (a cookie's Expires date holds a comma; the browser toolbox hands them to Chromium one per line).
 */
function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    flat[name] = Array.isArray(value) ? value.join(name === 'set-cookie' ? '\n' : ', ') : value;
  }
  return flat;
}

function onlyForwardable(
  headers: Record<string, string>,
  forwardable: readonly string[],
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => {
      const lowerName = name.toLowerCase();
      return forwardable.includes(lowerName) && !credentialHeaders.has(lowerName);
    }),
  );
}

function without(headers: Record<string, string>, names: ReadonlySet<string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !names.has(name.toLowerCase())));
}
