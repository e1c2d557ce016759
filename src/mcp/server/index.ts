export { type McpHttpRoutesOptions, mcpHttpRoutes } from './mcp-http-routes.js';
export { createRatchetMcpServer, type RatchetMcpServerOptions } from './ratchet-mcp-server.js';
