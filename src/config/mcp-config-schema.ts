import { z } from 'zod';
import { duration, maxDayMs, maxHourMs } from '../schemas/index.js';

const serverNamePattern = /^[a-zA-Z][\w-]*$/;
const loopbackHosts = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Hosts a plain http:// URL may point at without `allow_http`: headers never leave the machine. */
export function isLoopbackHost(hostname: string): boolean {
  return loopbackHosts.has(hostname) || hostname.startsWith('127.');
}

const stdioOnlyKeys = ['command', 'args', 'env', 'cwd'] as const;
const httpOnlyKeys = ['url', 'headers', 'allow_http'] as const;

/**
 * One MCP server as written in the config: a child process spoken to over stdio (`command`), or a remote
 * server over Streamable HTTP with a fallback to the older HTTP+SSE transport (`url`). `env` and `headers`
 * are secrets (they usually carry `${TOKEN}` references): nothing may log them.
 */
const mcpServerEntrySchema = z
  .strictObject({
    name: z.string().regex(serverNamePattern, {
      error: 'must start with a letter and contain only letters, digits, "_" and "-"',
    }),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    /** Added to a small safe environment (PATH, HOME, …): the worker's own variables are not passed on. */
    env: z.record(z.string(), z.string()).optional(),
    /** Working directory of the server process, relative to the config file. */
    cwd: z.string().min(1).optional(),
    url: z.string().min(1).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    /** Plain http:// to a host other than loopback sends the headers in clear: an explicit choice. */
    allow_http: z.boolean().optional(),
    /** Longest wait for one tool call's result. */
    timeout_ms: duration(1, maxDayMs, '1 day').default(60_000),
    /** Longest wait for a connection (process start or HTTP handshake, and the MCP initialization). */
    connect_timeout_ms: duration(1, maxHourMs, '1 hour').default(30_000),
  })
  .superRefine((entry, context) => {
    const stdio = entry.command !== undefined;
    const http = entry.url !== undefined;
    if (stdio === http) {
      context.addIssue({
        code: 'custom',
        path: [],
        message: stdio
          ? 'give either "command" (a stdio server) or "url" (an HTTP server), not both'
          : 'give "command" (a stdio server, with optional args, env, cwd) or "url" (an HTTP server, with optional headers)',
      });
      return;
    }
    const misplaced = stdio ? httpOnlyKeys : stdioOnlyKeys;
    for (const key of misplaced) {
      if (entry[key] !== undefined) {
        context.addIssue({
          code: 'custom',
          path: [key],
          message: stdio ? 'only for HTTP servers (with "url")' : 'only for stdio servers (with "command")',
        });
      }
    }
    if (entry.url !== undefined) {
      const problem = urlProblem(entry.url, entry.allow_http === true);
      if (problem) context.addIssue({ code: 'custom', path: ['url'], message: problem });
    }
  });

function urlProblem(url: string, allowHttp: boolean): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute http:// or https:// URL';
  }
  if (parsed.protocol === 'https:') return undefined;
  if (parsed.protocol !== 'http:') return `must be an http:// or https:// URL (got ${parsed.protocol})`;
  if (allowHttp || isLoopbackHost(parsed.hostname)) return undefined;
  return (
    'plain http:// sends the headers unencrypted: use https://, or set allow_http: true for a trusted ' +
    'private network (http:// is always allowed to 127.0.0.1, localhost and [::1])'
  );
}

export interface StdioMcpServerConfig {
  name: string;
  transport: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string | undefined;
  timeout_ms: number;
  connect_timeout_ms: number;
}

export interface HttpMcpServerConfig {
  name: string;
  transport: 'http';
  url: string;
  headers: Record<string, string>;
  timeout_ms: number;
  connect_timeout_ms: number;
}

export type McpServerConfig = StdioMcpServerConfig | HttpMcpServerConfig;

/** A server entry, checked, as the worker uses it: its transport spelled out. */
export const mcpServerConfigSchema = mcpServerEntrySchema.transform((entry): McpServerConfig => {
  const common = {
    name: entry.name,
    timeout_ms: entry.timeout_ms,
    connect_timeout_ms: entry.connect_timeout_ms,
  };
  if (entry.command !== undefined) {
    return {
      ...common,
      transport: 'stdio',
      command: entry.command,
      args: entry.args ?? [],
      env: entry.env ?? {},
      cwd: entry.cwd,
    };
  }
  return { ...common, transport: 'http', url: entry.url ?? '', headers: entry.headers ?? {} };
});
