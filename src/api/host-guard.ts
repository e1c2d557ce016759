import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { type HostPolicyOptions, hostPolicy, refusedHeader } from '../http/index.js';
import { ApiError } from './api-error.js';
import { describeValidationIssues } from './validation-issues.js';

export type HostGuardOptions = HostPolicyOptions;

/**
 * The guard against DNS rebinding and requests from other origins (src/http/host-policy.ts), for every route
 * but the public ones (health checks, which orchestrators call by a pod's address). `Host` must name a host
 * the API answers to: a loopback name, the bound address, or one of `api.allowed_hosts` (any port; any IP
 * address when bound to a non-loopback address). `Origin`, when a browser sends it, must be the API's own
 * (the console, /docs) or one of `api.allowed_origins`: a page on another port of localhost is another
 * origin, and the requests it makes (a form post, a `no-cors` fetch) need no answer to take effect.
 *
 * With tokens each check applies only when its list is set: a page cannot know a token, and a browser never
 * adds one by itself (unlike a cookie).
 */
export function hostGuard(options: HostGuardOptions): onRequestHookHandler {
  const policy = hostPolicy(options);
  return async (request: FastifyRequest) => {
    if (request.routeOptions.config.public === true) return;
    const { host, origin } = request.headers;
    const refused = refusedHeader(policy, { host, origin });
    if (refused !== undefined) throw refusal(refused, (refused === 'Host' ? host : origin) ?? '');
  };
}

/**
 * What the host guard's reading of `Host` relies on, for every request (health checks included): the target
 * is a path (origin-form), not `http://other.example/…` (absolute-form, which names the host in the target
 * and which HTTP says overrides `Host`; only proxies take it), and `Host` and `Origin` are sent once (Node
 * keeps the first of two, and a proxy in front may have read the other). Refused with 400 naming the part.
 */
export function requestShapeGuard(): onRequestHookHandler {
  return async (request: FastifyRequest) => {
    const target = request.raw.url ?? '';
    if (!target.startsWith('/')) {
      throw malformed(
        'path',
        '',
        'the request target must be a path ("/v1/…"); absolute-form is for proxies',
      );
    }
    const counts = new Map<string, number>();
    const { rawHeaders } = request.raw;
    for (let index = 0; index < rawHeaders.length; index += 2) {
      const name = rawHeaders[index]?.toLowerCase() ?? '';
      if (name === 'host' || name === 'origin') counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    for (const [name, count] of counts) {
      if (count > 1) throw malformed('headers', name, `sent ${count} times; send it once`);
    }
  };
}

function malformed(location: string, path: string, message: string): ApiError {
  const issues = [{ location, path, message }];
  return new ApiError('invalid_request', describeValidationIssues(issues), { issues });
}

function refusal(header: 'Host' | 'Origin', value: string): ApiError {
  const shown = value.length > 200 ? `${value.slice(0, 200)}…` : value;
  const message =
    header === 'Host'
      ? `requests with Host "${shown}" are refused: the API answers only to loopback names, its own address ` +
        'and api.allowed_hosts (a guard against DNS rebinding; add the name to api.allowed_hosts, or set ' +
        'api.tokens)'
      : `requests with Origin "${shown}" are refused: the API takes requests from pages of its own origin ` +
        'and of api.allowed_origins only (a guard against DNS rebinding and cross-site requests; add the ' +
        'origin to api.allowed_origins, or set api.tokens)';
  return new ApiError('forbidden', message, { header: header.toLowerCase() });
}
