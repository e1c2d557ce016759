import type { RatchetConfig } from './config-schema.js';

/** Environment variables whose values are secrets by their name (the provider SDKs read some of them). */
const secretVariableName = /(^|_)(API_KEY|APIKEY|TOKEN|TOKENS|SECRET|PASSWORD|PASS)$/i;

/**
 * Every secret value a config holds or points at: provider `api_key` and `headers`, MCP servers' `env` and
 * `headers`, `api.tokens`, the password in `redis.url`, and the values of environment variables named like
 * a secret (`*_API_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`), which a provider may read without the config
 * naming them.
 */
export function configSecrets(config: RatchetConfig, env: NodeJS.ProcessEnv): string[] {
  const secrets: string[] = [...config.api.tokens];
  for (const provider of config.providers) {
    if (typeof provider.api_key === 'string') secrets.push(provider.api_key);
    secrets.push(...stringValues(provider.headers));
  }
  for (const server of config.mcp_servers) {
    secrets.push(...stringValues(server.transport === 'stdio' ? server.env : server.headers));
  }
  const password = redisPassword(config.redis.url);
  if (password !== undefined) secrets.push(password);
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && secretVariableName.test(name)) secrets.push(value);
  }
  return secrets;
}

function stringValues(record: unknown): string[] {
  if (typeof record !== 'object' || record === null) return [];
  return Object.values(record).filter((value): value is string => typeof value === 'string');
}

function redisPassword(url: string): string | undefined {
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password === '' ? undefined : password;
  } catch {
    return undefined;
  }
}
