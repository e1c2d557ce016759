export { McpConnection, type McpConnectionOptions } from './mcp-connection.js';
export { McpServers, type McpServersOptions } from './mcp-servers.js';
