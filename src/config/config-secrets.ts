import { registerSecrets } from '../secrets/index.js';
import { apiTokenValues } from './api-tokens.js';
import type { RatchetConfig } from './config-schema.js';

/**
 * Variable names whose values are secrets: `*_API_KEY`, `*_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`,
 * `*_AUTH`, `*_CREDENTIALS` and the like. Other variables (a directory, a log level) are not hidden: masking
 * them everywhere would garble ordinary output.
 */
const secretName =
  /(^|[_-])(api[_-]?key|key|token|tokens|secret|password|passwd|pass|auth|credentials?)$|authorization|cookie/i;

/** Headers that describe a request rather than authenticate it; every other configured header is a secret. */
const plainHeader = /^(accept(-.*)?|content-.*|user-agent|cache-control|.*-version|.*-beta)$/i;

/**
 * Every secret value a config holds or points at: provider `api_key`, `api.tokens`, the
 * metrics listener's `telemetry.metrics.worker_token`, the password in
 * `redis.url`, each webhook's `secret`, provider, MCP and OTLP export `headers` (all but the plain ones such as `Accept`), and, by their names,
 * MCP servers' `env` and environment variables (which a provider SDK may read without the config naming them).
 */
export function configSecrets(config: RatchetConfig, env: NodeJS.ProcessEnv): string[] {
  const secrets: string[] = apiTokenValues(config.api.tokens);
  const workerToken = config.telemetry.metrics.worker_token;
  if (workerToken !== undefined) secrets.push(workerToken);
  for (const provider of config.providers) {
    if (typeof provider.api_key === 'string') secrets.push(provider.api_key);
    secrets.push(...headerSecrets(provider.headers));
  }
  for (const server of config.mcp_servers) {
    secrets.push(
      ...(server.transport === 'stdio' ? secretValues(server.env) : headerSecrets(server.headers)),
    );
  }
  secrets.push(...headerSecrets(config.telemetry.traces.headers));
  for (const webhook of config.webhooks) secrets.push(webhook.secret);
  const password = redisPassword(config.redis.url);
  if (password !== undefined) secrets.push(password);
  secrets.push(...secretValues(env));
  return secrets;
}

/** The values of the entries whose names say they are secrets. */
function secretValues(record: unknown): string[] {
  if (typeof record !== 'object' || record === null) return [];
  return Object.entries(record).flatMap(([name, value]) =>
    typeof value === 'string' && secretName.test(name) ? [value] : [],
  );
}

/** The values of the headers that are not plain ones. */
function headerSecrets(record: unknown): string[] {
  if (typeof record !== 'object' || record === null) return [];
  return Object.entries(record).flatMap(([name, value]) =>
    typeof value === 'string' && !plainHeader.test(name) ? [value] : [],
  );
}

function redisPassword(url: string): string | undefined {
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password === '' ? undefined : password;
  } catch {
    return undefined;
  }
}

/**
 * Registers the config's secrets (and the environment's secret-named values) with this process's redaction,
 * so every log line, recorded error, event and tool result hides them. Done by every path that builds or
 * takes a config: loadConfig, parseConfigText, a worker, an engine and an API built from a config object,
 * which a program may have changed after parsing (a key put in from a vault). Registering twice changes
 * nothing.
 */
export function registerConfigSecrets(config: RatchetConfig, env: NodeJS.ProcessEnv = process.env): void {
  registerSecrets(configSecrets(config, env));
}
