import type { BrowserContext, Route, WebSocketRoute } from 'playwright-core';
import { WebSocket as UpstreamSocket } from 'ws';
import type { ToolsConfig } from '../../config/index.js';
import { guardedFetch, guardedHop, type HopResponse, harmlessRequestHeaders } from './guarded-fetch.js';
import { checkDestination, type DestinationPolicy, pinnedLookup, type Resolver } from './ssrf-guard.js';

/** What a page tried and was refused, as the model is told after its next action. */
export interface BlockedRequest {
  url: string;
  reason: string;
}

export interface ConfinementOptions {
  settings: ToolsConfig['browser'];
  resolve: Resolver;
  /** Called for every request refused (a private address, a scheme other than http(s) or ws(s)). */
  /**
   * A request was refused. `pageNavigation`: it was a navigation of the page itself, for which Chromium
   * commits its error page (chrome-error://) a little later.
   */
  onBlocked(blocked: BlockedRequest, pageNavigation?: boolean): void;
  /**
   * Called when a navigation of the page's main frame is redirected: the navigation is stopped there, and the
   * toolbox opens the target itself (Chromium does not let an intercepted redirect be intercepted again).
   */
  onRedirect(target: string): void;
  /** Aborted when the context closes: requests in flight stop. */
  signal: AbortSignal;
}

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
  await context.route('**/*', (route) => forward(route, policy, options));
  await context.routeWebSocket(/.*/, (socket) => bridgeWebSocket(socket, options));
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

async function forward(route: Route, policy: DestinationPolicy, options: ConfinementOptions): Promise<void> {
  const request = route.request();
  const url = request.url();
  const frame = request.isNavigationRequest() ? request.frame() : undefined;
  const pageNavigation = frame !== undefined && frame.parentFrame() === null;
  try {
    const headers = Object.fromEntries(
      Object.entries(await request.allHeaders()).filter(
        ([name]) => !droppedRequestHeaders.has(name.toLowerCase()) && !name.startsWith(':'),
      ),
    );
    headers['accept-encoding'] = 'identity';
    const body = request.postDataBuffer();
    const timeout = AbortSignal.timeout(options.settings.action_timeout_ms);
    const sent = { method: request.method(), url, headers, ...(body === null ? {} : { body }) };
    const fetchOptions = {
      policy,
      resolve: options.resolve,
      maxResponseBytes: options.settings.max_resource_bytes,
      signal: AbortSignal.any([options.signal, timeout]),
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
    options.onBlocked({ url: truncate(url), reason: truncate((error as Error).message) }, pageNavigation);
    await route.abort('blockedbyclient').catch(() => {});
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
 * 1008 and reported to the model.
 */
async function bridgeWebSocket(socket: WebSocketRoute, options: ConfinementOptions): Promise<void> {
  const url = socket.url();
  const refuse = async (reason: string) => {
    options.onBlocked({ url: truncate(url), reason: truncate(reason) });
    await socket.close({ code: 1008, reason: 'refused by the browser toolbox' }).catch(() => {});
  };
  let target: URL;
  try {
    target = new URL(url);
    if (target.protocol !== 'ws:' && target.protocol !== 'wss:')
      throw new Error('only ws: and wss: are allowed');
  } catch (error) {
    await refuse(`url: ${(error as Error).message}`);
    return;
  }
  let destination: Awaited<ReturnType<typeof checkDestination>>;
  try {
    destination = await checkDestination(
      new URL(url.replace(/^ws/, 'http')),
      confinementPolicy(options.settings),
      options.resolve,
      options.signal,
    );
  } catch (error) {
    await refuse((error as Error).message);
    return;
  }
  const upstream = new UpstreamSocket(target, {
    lookup: pinnedLookup(destination),
    handshakeTimeout: options.settings.action_timeout_ms,
    maxPayload: options.settings.max_resource_bytes,
    followRedirects: false,
    perMessageDeflate: false,
  });
  const early: (string | Buffer)[] = [];
  const closeUpstream = () => {
    if (upstream.readyState === UpstreamSocket.CONNECTING) upstream.terminate();
    else upstream.close();
  };
  options.signal.addEventListener('abort', closeUpstream, { once: true });
  socket.onMessage((message) => {
    if (upstream.readyState === UpstreamSocket.OPEN) upstream.send(message);
    else if (early.length < maxEarlyMessages) early.push(message);
    else closeUpstream();
  });
  socket.onClose(() => closeUpstream());
  upstream.on('open', () => {
    for (const message of early.splice(0)) upstream.send(message);
  });
  upstream.on('message', (data, isBinary) => {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    socket.send(isBinary ? bytes : bytes.toString('utf8'));
  });
  upstream.on('error', (error) => {
    options.onBlocked({ url: truncate(url), reason: truncate(`WebSocket failed: ${error.message}`) });
  });
  upstream.on('close', (code) => {
    options.signal.removeEventListener('abort', closeUpstream);
    // 1005/1006 say "no code" and "abnormal", which a page may not be sent: a plain close instead.
    void socket
      .close(code >= 1000 && code < 5000 && code !== 1005 && code !== 1006 ? { code } : {})
      .catch(() => {});
  });
}

/** URLs and reasons a page controls are bounded before they reach the model. */
function truncate(text: string): string {
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
