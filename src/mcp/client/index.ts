export { redisToolListings } from '../../redis/mcp-tool-listings.js';
export type { McpToolListings } from '../../tools/index.js';
export { McpConnection, type McpConnectionOptions } from './mcp-connection.js';
export { McpServers, type McpServersOptions } from './mcp-servers.js';
