import type { FastifyPluginAsync } from 'fastify';
import { currentCaller } from '../../api/index.js';
import { sendRpcError, serveStatelessMcp } from './mcp-http-routes.js';
import { createToolboxMcpServer, type ToolboxMcpServerOptions } from './toolbox-mcp-server.js';

/** The path of the toolbox MCP server on the API (`api.mcp_toolboxes`). */
export const toolboxMcpPath = '/v1/mcp/toolboxes';

/**
 * `/v1/mcp/toolboxes`: the toolbox MCP server over stateless Streamable HTTP, behind the API's tokens and
 * host guard. Operators only: the workspace, the exec sandbox and the deployment's memory are shared by
 * every tenant, so a tenant's token is refused (403) rather than given another tenant's files (decision
 * 0041). Each request is a scope of its own: a browser page opened by a call is closed when its response
 * ends.
 */
export const toolboxMcpHttpRoutes: FastifyPluginAsync<ToolboxMcpServerOptions> = async (app, options) => {
  serveStatelessMcp(app, {
    url: toolboxMcpPath,
    refused: async (reply) => {
      const { tenant } = currentCaller();
      if (tenant === undefined) return false;
      sendRpcError(
        reply,
        403,
        -32000,
        `forbidden: the toolbox MCP server works on the deployment's shared workspace and memory; a tenant's ` +
          'token (this one is scoped to a tenant) cannot use it: use an operator token',
      );
      return true;
    },
    createServer: () => createToolboxMcpServer({ ...options, perRequest: true }),
  });
};
