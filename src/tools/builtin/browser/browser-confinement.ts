import type { BrowserContext, Frame, Request, Route, WebSocketRoute } from 'playwright-core';
import { WebSocket as UpstreamSocket } from 'ws';
import { harmlessRequestHeaders, type ToolsConfig } from '../../../config/index.js';
import { guardedFetch, guardedHop, type HopResponse } from '../http/guarded-fetch.js';
import { checkDestination, type DestinationPolicy, pinnedLookup, type Resolver } from '../http/ssrf-guard.js';
import { type BodyHold, type BytesInFlight, type CallGate, RequestSlots } from './browser-load-limits.js';
import { containedHandler, messageOf } from './contained-handler.js';

/** What a page tried and was refused, as the model is told after its next action. */
export interface BlockedRequest {
  url: string;
  reason: string;
}

export interface ConfinementOptions {
  settings: ToolsConfig['browser'];
  resolve: Resolver;
  /**
   * A request was refused (a private address, a scheme other than http(s) or ws(s), a window the page opened,
   * a bound). `pageNavigation`: it was a navigation of the page itself, for which Chromium
   * commits its error page (chrome-error://) a little later.
   */
  onBlocked(blocked: BlockedRequest, pageNavigation?: boolean): void;
  /** A window the page opened asked for its first document, which was refused (onBlocked says which). */
  onWindowRefused(): void;
  /**
   * Called when a navigation of the page's main frame is redirected: the navigation is stopped there, and the
   * toolbox opens the target itself (Chromium does not let an intercepted redirect be intercepted again).
   */
  onRedirect(target: string): void;
  /** Aborted when the context closes: requests in flight stop. */
  signal: AbortSignal;
  /** The worker's bytes in flight, shared by all its pages. */
  bytesInFlight: BytesInFlight;
  /** Open while a browser call acts on the page: between calls the page loads nothing. */
  gate: CallGate;
  /** Whether a frame is the run's page's (a window the page opened is not). */
  ownsFrame(frame: Frame): boolean;
}

/** What a body reserves before it is sent (it grows as the response arrives). */
const firstHoldBytes = 64 * 1024;

/** Headers Chromium sets that the worker's own request must not copy. */
const droppedRequestHeaders = new Set([
  'host',
  'connection',
  'content-length',
  'accept-encoding',
  'keep-alive',
]);
/** The body is given whole and unencoded: the headers that described how it travelled go. */
const droppedResponseHeaders = new Set([
  'content-length',
  'transfer-encoding',
  'content-encoding',
  'connection',
]);

/**
 * Confines a browser context the way the http toolbox is confined: every request the page makes (documents,
 * redirects, sub-resources, fetch/XHR) is intercepted and sent by the worker through the SSRF guard, one hop
 * at a time (a redirect comes back to the page and its next hop is intercepted again), connecting only to
 * the addresses checked. Chromium itself never opens a connection for them: it is launched with a proxy
 * that does not exist (see browserLaunchOptions), so a request the interception missed fails. A WebSocket
 * is bridged by the worker to its server after the same check (bridgeWebSocket), or refused and reported.
 */
export async function confineContext(context: BrowserContext, options: ConfinementOptions): Promise<void> {
  const policy = confinementPolicy(options.settings);
  const slots = new RequestSlots(options.settings.max_requests_in_flight);
  const sockets = { open: 0 };
  // A failure nothing expected still answers the request (a request left unanswered hangs in the page).
  const refuse = (error: unknown, route: Route) => {
    options.onBlocked({ url: truncate(route.request().url()), reason: truncate(messageOf(error)) });
    return route.abort('blockedbyclient').catch(() => {});
  };
  await context.route(
    '**/*',
    containedHandler((route: Route) => forward(route, policy, options, slots), refuse),
  );
  await context.routeWebSocket(
    /.*/,
    containedHandler(
      (socket: WebSocketRoute) => bridgeWebSocket(socket, options, sockets),
      (error, socket) => {
        options.onBlocked({ url: truncate(socket.url()), reason: truncate(messageOf(error)) });
        return socket.close({ code: 1011 }).catch(() => {});
      },
    ),
  );
}

/** The SSRF guard's policy, from tools.browser. */
export function confinementPolicy(settings: ToolsConfig['browser']): DestinationPolicy {
  return {
    allowHosts: settings.allow_hosts,
    privateHosts: settings.private_hosts,
    allowPrivate: settings.allow_private,
    section: 'tools.browser',
  };
}

/** The frame of a request, or undefined where Playwright has none (a window being opened, a service worker). */
function frameOf(request: Request): Frame | undefined {
  try {
    return request.frame();
  } catch {
    return undefined;
  }
}

async function forward(
  route: Route,
  policy: DestinationPolicy,
  options: ConfinementOptions,
  slots: RequestSlots,
): Promise<void> {
  const request = route.request();
  const url = request.url();
  const navigation = request.isNavigationRequest();
  const frame = frameOf(request);
  if (navigation && (frame === undefined || !options.ownsFrame(frame))) {
    // A window the page opens (window.open, target=_blank): the model acts on one page per run, and the
    // window is closed as it appears.
    options.onBlocked({
      url: truncate(url),
      reason: 'the page opened a new window, which was closed: open its URL with browser_open',
    });
    options.onWindowRefused();
    await route.abort('blockedbyclient');
    return;
  }
  if (frame !== undefined && !options.ownsFrame(frame)) {
    await route.abort('blockedbyclient');
    return;
  }
  const pageNavigation = navigation && frame?.parentFrame() === null;
  if (!options.gate.open) {
    // Between calls the page loads nothing; a navigation of the page is cancelled where it is ('aborted'
    // commits no error page), so the page still shows what it showed.
    await route.abort(pageNavigation ? 'aborted' : 'blockedbyclient');
    return;
  }
  const timeout = AbortSignal.timeout(options.settings.action_timeout_ms);
  const signal = AbortSignal.any([options.signal, timeout]);
  let giveBackSlot: (() => void) | undefined;
  let hold: BodyHold | undefined;
  try {
    const body = request.postDataBuffer();
    const maxBytes = options.settings.max_resource_bytes;
    if (body !== null && body.length > maxBytes) {
      throw new Error(
        `the request's body is ${body.length} bytes, more than tools.browser.max_resource_bytes (${maxBytes})`,
      );
    }
    giveBackSlot = await slots.acquire(signal);
    hold = await options.bytesInFlight.hold(firstHoldBytes + (body?.length ?? 0), signal);
    const bodyHold = hold;
    // The call may have ended while the request waited its turn.
    if (!options.gate.open) throw new Error('the page loads nothing between browser calls');
    const headers = Object.fromEntries(
      Object.entries(await request.allHeaders()).filter(
        ([name]) => !droppedRequestHeaders.has(name.toLowerCase()) && !name.startsWith(':'),
      ),
    );
    headers['accept-encoding'] = 'identity';
    const sent = { method: request.method(), url, headers, ...(body === null ? {} : { body }) };
    const fetchOptions = {
      policy,
      resolve: options.resolve,
      maxResponseBytes: maxBytes,
      signal,
      holdBody: (total: number) => bodyHold.grow((body?.length ?? 0) + total, signal),
    };
    if (pageNavigation) {
      const response = await guardedHop(sent, fetchOptions);
      const location = response.headers.location;
      if (response.status >= 300 && response.status < 400 && location !== undefined) {
        options.onRedirect(new URL(location, url).href);
        await route.abort('aborted').catch(() => {});
        return;
      }
      await fulfill(route, response);
      return;
    }
    // Everything else (sub-resources, frames, fetch/XHR) has its redirects followed here, each hop checked.
    const response = await guardedFetch(sent, {
      ...fetchOptions,
      maxRedirects: 10,
      forwardHeadersOnRedirect: harmlessRequestHeaders,
    });
    await fulfill(route, response);
  } catch (error) {
    options.onBlocked({ url: truncate(url), reason: truncate(messageOf(error)) }, pageNavigation);
    await route.abort('blockedbyclient').catch(() => {});
  } finally {
    hold?.release();
    giveBackSlot?.();
  }
}

async function fulfill(route: Route, response: HopResponse): Promise<void> {
  const headers = Object.fromEntries(
    Object.entries(response.headers).filter(([name]) => !droppedResponseHeaders.has(name)),
  );
  await route.fulfill({ status: response.status, headers, body: response.body });
}

/** Messages a page may send before its socket's server has answered: more close the socket. */
const maxEarlyMessages = 100;

/**
 * A page's WebSocket, opened by the worker: its destination checked by the SSRF guard as every request is,
 * the connection pinned to the checked addresses (no second DNS answer), messages passed both ways and
 * bounded by max_resource_bytes each; a close on either side closes the other. A refused one is closed with
 * 1008 and reported to the model. Bounded: at most max_requests_in_flight sockets per page; what the server
 * sends reaches the page at most max_resource_bytes a second, and waits (the server paused) between calls.
 */
async function bridgeWebSocket(
  socket: WebSocketRoute,
  options: ConfinementOptions,
  sockets: { open: number },
): Promise<void> {
  const url = socket.url();
  const { settings } = options;
  const refuse = async (reason: string) => {
    options.onBlocked({ url: truncate(url), reason: truncate(reason) });
    await socket.close({ code: 1008, reason: 'refused by the browser toolbox' }).catch(() => {});
  };
  if (!options.gate.open) {
    await socket.close({ code: 1008, reason: 'refused by the browser toolbox' }).catch(() => {});
    return;
  }
  if (sockets.open >= settings.max_requests_in_flight) {
    await refuse(
      `the page has ${sockets.open} WebSockets open, the most tools.browser.max_requests_in_flight allows`,
    );
    return;
  }
  let target: URL;
  try {
    target = new URL(url);
    if (target.protocol !== 'ws:' && target.protocol !== 'wss:')
      throw new Error('only ws: and wss: are allowed');
  } catch (error) {
    await refuse(`url: ${messageOf(error)}`);
    return;
  }
  sockets.open += 1;
  let counted = true;
  const uncount = () => {
    if (counted) sockets.open -= 1;
    counted = false;
  };
  let destination: Awaited<ReturnType<typeof checkDestination>>;
  try {
    destination = await checkDestination(
      new URL(url.replace(/^ws/, 'http')),
      confinementPolicy(settings),
      options.resolve,
      options.signal,
    );
  } catch (error) {
    uncount();
    await refuse(messageOf(error));
    return;
  }
  const maxBytes = settings.max_resource_bytes;
  const upstream = new UpstreamSocket(target, {
    lookup: pinnedLookup(destination),
    handshakeTimeout: settings.action_timeout_ms,
    maxPayload: maxBytes,
    followRedirects: false,
    perMessageDeflate: false,
  });
  const early: (string | Buffer)[] = [];
  let earlyBytes = 0;
  const closeUpstream = () => {
    if (upstream.readyState === UpstreamSocket.CONNECTING) upstream.terminate();
    else upstream.close();
  };
  const tooMuch = (reason: string) => {
    options.onBlocked({ url: truncate(url), reason });
    closeUpstream();
  };
  options.signal.addEventListener('abort', closeUpstream, { once: true });
  socket.onMessage(
    containedHandler(
      (message: string | Buffer) => {
        const size = Buffer.byteLength(message);
        if (size > maxBytes)
          return tooMuch(
            `a message of the page was larger than ${maxBytes} bytes (tools.browser.max_resource_bytes)`,
          );
        if (upstream.readyState === UpstreamSocket.OPEN) {
          // The server not reading what the page sends must not pile it up in the worker.
          if (upstream.bufferedAmount > maxBytes)
            return tooMuch('the server did not read what the page sent');
          upstream.send(message);
        } else if (early.length < maxEarlyMessages && earlyBytes + size <= maxBytes) {
          early.push(message);
          earlyBytes += size;
        } else closeUpstream();
      },
      () => closeUpstream(),
    ),
  );
  socket.onClose(
    containedHandler(
      () => closeUpstream(),
      () => {},
    ),
  );
  const toPage = pacedToPage(socket, upstream, options.gate, maxBytes);
  upstream.on('open', () => {
    for (const message of early.splice(0)) upstream.send(message);
    earlyBytes = 0;
  });
  upstream.on('message', (data, isBinary) => {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    toPage(isBinary ? bytes : bytes.toString('utf8'), bytes.length);
  });
  upstream.on('error', (error) => {
    options.onBlocked({ url: truncate(url), reason: truncate(`WebSocket failed: ${error.message}`) });
  });
  upstream.on('close', (code) => {
    uncount();
    options.signal.removeEventListener('abort', closeUpstream);
    // 1005/1006 say "no code" and "abnormal", which a page may not be sent: a plain close instead.
    void socket
      .close(code >= 1000 && code < 5000 && code !== 1005 && code !== 1006 ? { code } : {})
      .catch(() => {});
  });
}

/**
 * Passes the server's messages to the page in order, at most `bytesPerSecond` (the worker hands each to
 * Chromium whole, and a server sending faster than Chromium reads would pile them up in the worker), and none
 * between calls: the server is paused while messages wait, so they wait in its socket, not in the worker.
 */
function pacedToPage(
  socket: WebSocketRoute,
  upstream: UpstreamSocket,
  gate: CallGate,
  bytesPerSecond: number,
): (message: string | Buffer, size: number) => void {
  const waiting: { message: string | Buffer; size: number }[] = [];
  let allowance = bytesPerSecond;
  let refilledAt = performance.now();
  let draining = false;
  const drain = async () => {
    draining = true;
    try {
      for (let next = waiting[0]; next !== undefined; next = waiting[0]) {
        await gate.whenOpen();
        const now = performance.now();
        allowance = Math.min(bytesPerSecond, allowance + ((now - refilledAt) / 1000) * bytesPerSecond);
        refilledAt = now;
        if (allowance < next.size) {
          await new Promise((resume) =>
            setTimeout(resume, Math.ceil(((next.size - allowance) / bytesPerSecond) * 1000)),
          );
          continue;
        }
        allowance -= next.size;
        waiting.shift();
        if (upstream.readyState !== UpstreamSocket.OPEN) continue;
        socket.send(next.message);
      }
    } finally {
      draining = false;
      if (upstream.isPaused && upstream.readyState === UpstreamSocket.OPEN) upstream.resume();
    }
  };
  return (message, size) => {
    waiting.push({ message, size });
    if (!gate.open || waiting.length > 1 || allowance < size) upstream.pause();
    if (!draining) void drain();
  };
}

/** The most characters of a URL, title or reason a page controls that reach the model. */
export const maxPageTextChars = 500;

/** A URL, title or reason a page controls, cut before it reaches the model (with … where cut). */
export function truncatePageText(text: string, max = maxPageTextChars): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

const truncate = (text: string) => truncatePageText(text);
