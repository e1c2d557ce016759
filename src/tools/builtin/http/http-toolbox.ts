import { z } from 'zod';
import type { ToolsConfig } from '../../../config/index.js';
import { defineTool } from '../../tool.js';
import { createToolBox, type ToolBox } from '../../toolbox.js';
import { guardedFetch } from './guarded-fetch.js';
import { decodeResponseBody } from './response-body.js';
import { type Resolver, systemResolver } from './ssrf-guard.js';

export interface HttpToolboxOptions {
  settings: ToolsConfig['http'];
  /** DNS resolution; tests give their own to answer for made-up names. */
  resolve?: Resolver;
}

/** Set by the tool itself from the URL and the body. */
const reservedHeaders = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);

/** `http`: one HTTP request per call, guarded against requests to internal addresses. */
export function httpToolbox(options: HttpToolboxOptions): ToolBox {
  const { settings } = options;
  const request = defineTool({
    name: 'http_request',
    description:
      'Sends one HTTP(S) request and returns the status, headers and body, cut at ' +
      `${settings.max_response_bytes} bytes: text in "body", or base64 in "body_base64" when the content ` +
      'type is not text (images, PDFs, archives). Redirects are followed. Internal addresses are refused.',
    inputSchema: z.strictObject({
      method: z
        .enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
        .optional()
        .describe('default GET'),
      url: z.string().min(1).describe('an absolute http or https URL'),
      headers: z.record(z.string().min(1), z.string()).optional().describe('request headers'),
      body: z.string().optional().describe('the request body (set a content-type header to match)'),
    }),
    // The method decides whether a request may be repeated; the tool cannot know, so it claims nothing.
    idempotent: false,
    handler: async (context, input) => {
      const headers = input.headers ?? {};
      for (const name of Object.keys(headers)) {
        if (reservedHeaders.has(name.toLowerCase())) {
          throw new Error(`headers.${name}: set by the tool from the url and body; leave it out`);
        }
      }
      const timeout = AbortSignal.timeout(settings.timeout_ms);
      const signal = AbortSignal.any([context.signal, timeout]);
      try {
        const response = await guardedFetch(
          {
            method: input.method ?? 'GET',
            url: input.url,
            headers,
            ...(input.body === undefined ? {} : { body: input.body }),
          },
          {
            policy: {
              allowHosts: settings.allow_hosts,
              privateHosts: settings.private_hosts,
              allowPrivate: settings.allow_private,
            },
            resolve: options.resolve ?? systemResolver,
            maxRedirects: settings.max_redirects,
            maxResponseBytes: settings.max_response_bytes,
            forwardHeadersOnRedirect: settings.forward_headers_on_redirect,
            signal,
          },
        );
        return {
          status: response.status,
          url: response.url,
          headers: response.headers,
          ...decodeResponseBody(response.headers['content-type'], response.body),
          ...(response.truncated ? { truncated: true } : {}),
          ...(response.redirects.length > 0 ? { redirects: response.redirects } : {}),
        };
      } catch (error) {
        if (!context.signal.aborted && timeout.aborted) {
          throw new Error(`the request took longer than ${settings.timeout_ms} ms (tools.http.timeout_ms)`);
        }
        throw error;
      }
    },
  });
  return createToolBox('http', [request]);
}
