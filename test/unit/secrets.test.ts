import '../../src/models/index.js';
import { describe, expect, it } from 'vitest';
import { configSecrets } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { createRedactor, redactSecrets, redactSecretsIn, registerSecrets } from '../../src/secrets/index.js';
import { configParser } from '../config/config-parser.js';

describe('createRedactor', () => {
  it('hides a secret as written, escaped inside JSON, and percent-encoded in a URL', () => {
    const secret = 'pa"ss\\word/with spaces+more';
    const redact = createRedactor([secret]);
    expect(redact(`plain ${secret} end`)).toBe('plain [redacted] end');
    expect(redact(JSON.stringify({ echo: secret }))).toBe('{"echo":"[redacted]"}');
    expect(redact(`https://host/?key=${encodeURIComponent(secret)}`)).toBe('https://host/?key=[redacted]');
  });

  it('ignores values too short to be secrets, and hides a longer secret whole when it contains another', () => {
    const redact = createRedactor(['short', 'abcdefgh', 'abcdefgh-and-more']);
    expect(redact('short abcdefgh-and-more abcdefgh')).toBe('short [redacted] [redacted]');
  });
});

describe('configSecrets', () => {
  it('collects provider keys, API tokens, the Redis password, headers but the plain ones, and by name: MCP env and variables', () => {
    const config = configParser().parse(`
providers:
  - { name: a, kind: openai, model: m, api_key: sk-provider-key-1234, headers: { x-org-id: org-header-value-1, accept: application/json, anthropic-version: 2023-06-01-x } }
mcp_servers:
  - { name: s, command: node, env: { SERVICE_KEY: mcp-env-secret-123, ROOT_DIR: /srv/projects/all } }
  - { name: h, url: "https://mcp.example/mcp", headers: { authorization: "Bearer mcp-header-token-1" } }
api: { tokens: [api-token-0123456789] }
redis: { url: "redis://:redis-password-1@127.0.0.1:6379" }
agents: [{ name: x, provider: a }]
`);
    const secrets = configSecrets(config, { OPENAI_API_KEY: 'sk-from-the-environment', HOME: '/root' });
    expect(secrets).toEqual(
      expect.arrayContaining([
        'sk-provider-key-1234',
        'org-header-value-1',
        'mcp-env-secret-123',
        'Bearer mcp-header-token-1',
        'api-token-0123456789',
        'redis-password-1',
        'sk-from-the-environment',
      ]),
    );
    // Values whose names do not say they are secrets stay visible.
    expect(secrets).not.toContain('/root');
    expect(secrets).not.toContain('application/json');
    expect(secrets).not.toContain('2023-06-01-x');
    expect(secrets).not.toContain('/srv/projects/all');
  });
});

describe('registered secrets', () => {
  it('are hidden from every log line, whatever field or message carries them', () => {
    registerSecrets(['registered-secret-value-42']);
    const lines: string[] = [];
    const logger = createLogger({
      level: 'info',
      destination: { write: (line: string) => lines.push(line) },
    });
    logger.error({ err: new Error('upstream said registered-secret-value-42'), note: 'x' }, 'failed');
    logger.info({ nested: { deep: ['registered-secret-value-42'] } }, 'registered-secret-value-42');
    expect(lines).toHaveLength(2);
    expect(lines.join('\n')).not.toContain('registered-secret-value-42');
    expect(lines.join('\n')).toContain('[redacted]');
    expect(redactSecrets('a registered-secret-value-42 b')).toBe('a [redacted] b');
    const details = { status: 401, body: ['registered-secret-value-42'] };
    expect(redactSecretsIn(details)).toEqual({ status: 401, body: ['[redacted]'] });
    const clean = { status: 401 };
    expect(redactSecretsIn(clean)).toBe(clean);
  });
});
