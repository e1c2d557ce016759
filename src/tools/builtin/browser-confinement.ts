import type { BrowserContext, Route, WebSocketRoute } from 'playwright-core';
import type { ToolsConfig } from '../../config/index.js';
import { guardedFetch, guardedHop, type HopResponse, harmlessRequestHeaders } from './guarded-fetch.js';
import { checkDestination, type DestinationPolicy, type Resolver } from './ssrf-guard.js';

/** What a page tried and was refused, as the model is told after its next action. */
export interface BlockedRequest {
  url: string;
  reason: string;
}

export interface ConfinementOptions {
  settings: ToolsConfig['browser'];
  resolve: Resolver;
  /** Called for every request refused (a private address, a scheme other than http(s), a WebSocket). */
  onBlocked(blocked: BlockedRequest): void;
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
 * that does not exist (see browserLaunchOptions), so a request the interception missed fails. WebSockets
 * are refused, their destination reported.
 */
export async function confineContext(context: BrowserContext, options: ConfinementOptions): Promise<void> {
  const policy = confinementPolicy(options.settings);
  await context.route('**/*', (route) => forward(route, policy, options));
  await context.routeWebSocket(/.*/, (socket) => refuseWebSocket(socket, options));
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
    const frame = request.isNavigationRequest() ? request.frame() : undefined;
    if (frame && frame.parentFrame() === null) {
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
    options.onBlocked({ url: truncate(url), reason: truncate((error as Error).message) });
    await route.abort('blockedbyclient').catch(() => {});
  }
}

async function fulfill(route: Route, response: HopResponse): Promise<void> {
  const headers = Object.fromEntries(
    Object.entries(response.headers).filter(([name]) => !droppedResponseHeaders.has(name)),
  );
  await route.fulfill({ status: response.status, headers, body: response.body });
}

async function refuseWebSocket(socket: WebSocketRoute, options: ConfinementOptions): Promise<void> {
  const url = socket.url();
  let reason = 'WebSockets are not supported by the browser toolbox';
  try {
    // Said for the model's sake: a refused destination is named as the http guard names it.
    await checkDestination(
      new URL(url.replace(/^ws/, 'http')),
      confinementPolicy(options.settings),
      options.resolve,
      options.signal,
    );
  } catch (error) {
    reason = (error as Error).message;
  }
  options.onBlocked({ url: truncate(url), reason: truncate(reason) });
  await socket.close({ code: 1008, reason: 'refused by the browser toolbox' }).catch(() => {});
}

/** URLs and reasons a page controls are bounded before they reach the model. */
function truncate(text: string): string {
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
