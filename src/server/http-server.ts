import type { FastifyInstance } from 'fastify';
import {
  type ApiServerOptions,
  answersWithin,
  createApiServer,
  runnableSummaries,
  tenantScopedEngine,
} from '../api/index.js';
import { mcpHttpRoutes, type ToolboxMcpServerOptions, toolboxMcpHttpRoutes } from '../mcp/server/index.js';

export interface HttpServerOptions extends ApiServerOptions {
  /** The toolboxes served at /v1/mcp/toolboxes (`api.mcp_toolboxes`); absent: no such route. */
  toolboxMcp?: ToolboxMcpServerOptions | undefined;
}

/**
 * The HTTP server a Ratchet API process runs: the API (`/v1`, health, OpenAPI) and Ratchet's MCP server at
 * `/mcp`, which works through the API's operations and sits behind the same hooks (tokens, host guard, body
 * parser, errors), and with `toolboxMcp` the toolbox MCP server at /v1/mcp/toolboxes. Mounted here, so the API
 * does not depend on the MCP server that depends on it.
 */
export function createHttpServer(options: HttpServerOptions): FastifyInstance {
  const app = createApiServer(options);
  const { api } = options.config;
  app.register(mcpHttpRoutes, {
    // The MCP tools see only their caller's tenant, as the routes do (decision 0035).
    engine: tenantScopedEngine(options.engine),
    agents: runnableSummaries(options.config),
    logger: options.logger,
    redisAnswers: () => answersWithin(options.pingRedis, api.redis_timeout_ms),
  });
  if (options.toolboxMcp) app.register(toolboxMcpHttpRoutes, options.toolboxMcp);
  return app;
}
