import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { unavailableRetryAfterSeconds } from '../../api/index.js';
import { createRatchetMcpServer, type RatchetMcpServerOptions } from './ratchet-mcp-server.js';

export interface McpHttpRoutesOptions extends RatchetMcpServerOptions {
  /**
   * Whether Redis answers now (bounded). Every tool needs it, and once the transport has the response
   * its status is 200, whatever happens after: so the check comes first, and Redis trouble is a 503.
   */
  redisAnswers: () => Promise<boolean>;
}

/**
 * `/mcp`: Ratchet's MCP server over Streamable HTTP, behind the API's onRequest hooks: its bearer tokens and
 * its guard against DNS rebinding (src/api/host-guard.ts), as for /v1. Stateless: every POST gets a server and a transport of its own, closed when its response ends.
 * Nothing is kept between requests (no MCP session to route to the same API instance, to expire or to
 * lose in a restart), because everything a tool reads is in Redis; progress notifications of a wait_run
 * travel on that request's own SSE response. With no session there is no standalone stream: GET and
 * DELETE answer 405.
 */
export const mcpHttpRoutes: FastifyPluginAsync<McpHttpRoutesOptions> = async (app, options) => {
  serveStatelessMcp(app, {
    url: '/mcp',
    refused: async (reply) => {
      if (await options.redisAnswers()) return false;
      reply.header('retry-after', String(unavailableRetryAfterSeconds));
      sendRpcError(reply, 503, -32000, 'the service is temporarily unavailable; retry later');
      return true;
    },
    createServer: () => createRatchetMcpServer(options),
  });
};

export interface StatelessMcpRoute {
  url: string;
  /**
   * Answers the request itself (an error) before any MCP server exists, and says so; false leaves it to the
   * server. (A boolean, not the reply: a FastifyReply is a thenable, which an async function would await.)
   */
  refused(reply: FastifyReply): Promise<boolean>;
  createServer(): McpServer | Server;
}

/**
 * An MCP endpoint over stateless Streamable HTTP at `url`: every POST gets a server and a transport of its
 * own, closed when its response ends (aborting the handlers still running); GET and DELETE answer 405.
 */
export function serveStatelessMcp(app: FastifyInstance, route: StatelessMcpRoute): void {
  const open = new Set<StreamableHTTPServerTransport>();
  // An open call would hold the API's close until it ends: closing the transport ends it.
  app.addHook('preClose', async () => {
    await Promise.allSettled([...open].map((transport) => transport.close()));
  });

  app.post(route.url, { schema: { hide: true } }, async (request, reply) => {
    if (await route.refused(reply)) return reply;
    const server = route.createServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    open.add(transport);
    reply.raw.once('close', () => {
      open.delete(transport);
      // Closing aborts the request handlers still running (a wait_run whose client went away).
      transport.close().catch(() => {});
      server.close().catch(() => {});
    });
    await server.connect(transport);
    reply.hijack();
    try {
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (error) {
      request.log.error({ err: error }, 'MCP request failed');
      if (!reply.raw.headersSent) sendRawRpcError(reply, 500, -32603, 'internal server error');
      else reply.raw.end();
    }
    return reply;
  });

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: route.url,
      schema: { hide: true },
      handler: async (_request, reply) =>
        sendRpcError(reply, 405, -32000, 'method not allowed: this MCP endpoint is stateless (POST only)'),
    });
  }
}

/** A JSON-RPC error answer (what an MCP client reads), before the transport took the response. */
export function sendRpcError(
  reply: FastifyReply,
  status: number,
  code: number,
  message: string,
): FastifyReply {
  if (status === 405) reply.header('allow', 'POST');
  return reply.status(status).send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

function sendRawRpcError(reply: FastifyReply, status: number, code: number, message: string): void {
  reply.raw.writeHead(status, { 'content-type': 'application/json' });
  reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
