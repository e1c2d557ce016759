import type { RatchetConfig } from './config-schema.js';

/**
 * Names (of variables and headers) whose values are secrets: `*_API_KEY`, `*_KEY`, `*_TOKEN`, `*_SECRET`,
 * `*_PASSWORD`, `X-Api-Key`, `Authorization`, `Cookie` and the like. Other values of `env` and `headers`
 * (a directory, `application/json`) are not hidden: masking them everywhere would garble ordinary output.
 */
const secretName =
  /(^|[_-])(api[_-]?key|key|token|tokens|secret|password|passwd|pass|auth|credentials?)$|authorization|cookie/i;

/**
 * Every secret value a config holds or points at: provider `api_key`, `api.tokens`, the password in
 * `redis.url`, and, by their names, provider `headers`, MCP servers' `env` and `headers`, and environment
 * variables (which a provider SDK may read without the config naming them).
 */
export function configSecrets(config: RatchetConfig, env: NodeJS.ProcessEnv): string[] {
  const secrets: string[] = [...config.api.tokens];
  for (const provider of config.providers) {
    if (typeof provider.api_key === 'string') secrets.push(provider.api_key);
    secrets.push(...secretValues(provider.headers));
  }
  for (const server of config.mcp_servers) {
    secrets.push(...secretValues(server.transport === 'stdio' ? server.env : server.headers));
  }
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

function redisPassword(url: string): string | undefined {
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password === '' ? undefined : password;
  } catch {
    return undefined;
  }
}
