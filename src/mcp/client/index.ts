export { McpConnection, type McpConnectionOptions } from './mcp-connection.js';
export { McpServers, type McpServersOptions } from './mcp-servers.js';
export { type McpToolListings, redisToolListings } from './mcp-tool-listings.js';
