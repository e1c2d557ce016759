export { type McpHttpRoutesOptions, mcpHttpRoutes } from './mcp-http-routes.js';
export { createRatchetMcpServer, type RatchetMcpServerOptions } from './ratchet-mcp-server.js';
export { maxServedToolboxes, type ServedToolboxes, servedToolboxes } from './served-toolboxes.js';
export { toolboxMcpHttpRoutes, toolboxMcpPath } from './toolbox-mcp-http-routes.js';
export {
  createToolboxMcpServer,
  maxToolboxArgumentChars,
  type ToolboxMcpServerOptions,
} from './toolbox-mcp-server.js';
export { maxElicitationMs, mcpToolboxAgent } from './toolbox-tool-context.js';
