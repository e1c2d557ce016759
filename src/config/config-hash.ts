import { createHash } from 'node:crypto';
import type { RatchetConfig } from './config-schema.js';
import { configSecrets } from './config-secrets.js';

/**
 * A stable hash of the loaded config (GET /v1/system `config_hash`): two processes whose hashes match run the
 * same settings. Secrets are replaced by a placeholder before hashing and keys are sorted, so the hash says nothing about them
 * (rotating a key leaves it unchanged) and cannot be used to test a guess. Keys are sorted: the order a file
 * wrote them in does not matter. 16 hex digits of SHA-256.
 */
export function configHash(config: RatchetConfig): string {
  const secrets = new Set(configSecrets(config, {}).filter((secret) => secret !== ''));
  const redacted = redact(config, secrets);
  return createHash('sha256').update(JSON.stringify(redacted)).digest('hex').slice(0, 16);
}

function redact(value: unknown, secrets: ReadonlySet<string>): unknown {
  if (typeof value === 'string') {
    if (secrets.has(value)) return '[secret]';
    // A URL carrying a password (redis.url): the password is a secret, the rest is not.
    let text = value;
    for (const secret of secrets) if (text.includes(secret)) text = text.split(secret).join('[secret]');
    return text;
  }
  if (Array.isArray(value)) return value.map((item) => redact(item, secrets));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, redact((value as Record<string, unknown>)[key], secrets)]),
  );
}
