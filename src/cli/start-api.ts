import type { LoadedConfig, RatchetConfig } from '../config/index.js';
import { type Engine, engineFromConfig } from '../engine/index.js';
import type { Logger } from '../log/index.js';
import { type ServedToolboxes, servedToolboxes } from '../mcp/server/index.js';
import type { RedisClient } from '../redis/connection.js';
import { closeRedis, createRedis, redisTargetOf } from '../redis/connection.js';
import { redisMemory } from '../redis/memory-store.js';
import { createHttpServer } from '../server/index.js';
import { createToolBox, type ToolBox } from '../tools/index.js';
import { buildAgents, toolLookup } from '../worker/index.js';
import { CliError } from './cli-error.js';

export interface ApiProcess {
  /** The base URL clients use. */
  url: string;
  close(): Promise<void>;
}

export interface StartApiOptions {
  loaded: LoadedConfig;
  toolboxes: readonly ToolBox[];
  logger: Logger;
  host: string;
  /** 0 picks a free port. */
  port: number;
}

/** The HTTP API on its own Redis connection and engine, listening. */
export async function startApi(options: StartApiOptions): Promise<ApiProcess> {
  const { loaded, logger } = options;
  const { config } = loaded;
  const { engine, redis, close: closeEngine } = openApiEngine({ ...options, name: 'ratchet-api' });
  let served: ServedToolboxes | undefined;
  const release = async () => {
    try {
      await served?.close();
    } finally {
      await closeEngine();
    }
  };
  let app: ReturnType<typeof createHttpServer>;
  try {
    served = toolboxesToServe(loaded, options.toolboxes);
    app = createHttpServer({
      engine,
      config,
      logger,
      bindHost: options.host,
      pingRedis: () => redis.ping(),
      toolboxMcp: served && {
        toolboxes: served.toolboxes,
        approvalTools: served.approvalTools,
        memory: redisMemory(redis, engine.space),
        logger: logger.child({ component: 'toolbox-mcp' }),
      },
    });
    await app.listen({ host: options.host, port: options.port });
  } catch (error) {
    await release();
    const code = (error as { code?: unknown }).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      throw new CliError(
        `cannot listen on ${options.host}:${options.port} (${code}): choose another port with --port, ` +
          'or api.host / api.port in the config',
      );
    }
    throw error;
  }
  // Config schedules by id (decision 0036): every process does it, so the first one up sets their timers. In
  // the background, again until it succeeds: an API starts (and answers 503) while Redis is away.
  const stopSyncing = syncSchedules(engine, config.schedules, logger);
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    url: `http://${displayHost(options.host)}:${port}`,
    async close() {
      // Idle keep-alive sockets (an EventSource's, after it closed) would hold the close: drop them after a grace.
      stopSyncing();
      const drop = setTimeout(() => app.server.closeAllConnections(), 2_000);
      drop.unref();
      try {
        await app.close();
      } finally {
        clearTimeout(drop);
        await release();
      }
    },
  };
}

/** The toolboxes `api.mcp_toolboxes` serves, built from the config; undefined when it is off. */
function toolboxesToServe(loaded: LoadedConfig, toolboxes: readonly ToolBox[]): ServedToolboxes | undefined {
  const section = loaded.config.api.mcp_toolboxes;
  if (!section.enabled) return undefined;
  try {
    return servedToolboxes({
      names: section.toolboxes,
      config: loaded.config,
      configDir: loaded.configDir,
      codeToolboxes: toolboxes,
      requiresApproval: section.requires_approval,
      source: 'api.mcp_toolboxes.toolboxes',
    });
  } catch (error) {
    throw new CliError(`${loaded.path}: ${(error as Error).message}`, 2);
  }
}

/** An engine as the API uses it, on a connection of its own. */
export interface ApiEngineConnection {
  engine: Engine;
  redis: RedisClient;
  /** Closes the engine, then the connection. */
  close(): Promise<void>;
}

/**
 * The engine a client-facing process (the API, `ratchet mcp`) records and reads with. Requests fail fast
 * (503, or a tool error) while Redis is away or frozen instead of hanging; event followers share the
 * engine's event hub.
 */
export function openApiEngine(options: {
  loaded: LoadedConfig;
  toolboxes: readonly ToolBox[];
  logger: Logger;
  /** The connection's name (CLIENT LIST). */
  name: string;
}): ApiEngineConnection {
  const { loaded, logger } = options;
  const { config } = loaded;
  // Every command is bounded (api.redis_timeout_ms), queued ones too, so a request answers 503 in bounded
  // time while Redis refuses, resets or is frozen. The offline queue stays: a command sent during a short
  // reconnect still goes through. The event hub's blocking reads use their own timeout (event-hub.ts).
  const redis = createRedis({
    ...redisTargetOf(config.redis),
    logger,
    name: options.name,
    maxRetriesPerRequest: 1,
    commandTimeoutMs: config.api.redis_timeout_ms,
  });
  // The agents' tools, so that an answer that edits an approved call's arguments is checked.
  // The API runs no tools: an MCP server's toolbox is known here by its name only.
  const mcpToolboxes = config.mcp_servers.map((server) => createToolBox(server.name, []));
  const agents = buildAgents(config, loaded.configDir, [...options.toolboxes, ...mcpToolboxes], logger);
  const engine = engineFromConfig({ config, redis, logger, findTool: toolLookup(agents) });
  return {
    engine,
    redis,
    async close() {
      try {
        await engine.close();
      } finally {
        await closeRedis(redis);
      }
    },
  };
}

/** A host clients can connect to: a wildcard address means this machine. */
function displayHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/** How long a failed sync of the config's schedules waits before it tries again. */
const scheduleSyncRetryMs = 5_000;

/** Syncs the config's schedules, retrying until it succeeds; returns what stops it. */
function syncSchedules(engine: Engine, schedules: RatchetConfig['schedules'], logger: Logger): () => void {
  if (schedules.length === 0) return () => undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const attempt = () => {
    engine
      .schedules()
      .syncConfig(schedules)
      .catch((error: unknown) => {
        if (stopped) return;
        logger.warn({ err: error }, 'could not sync the config schedules: trying again in 5 s');
        timer = setTimeout(attempt, scheduleSyncRetryMs);
      });
  };
  attempt();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
