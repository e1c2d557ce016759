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

describe('createRedactor: partial and encoded secrets', () => {
  const key = 'sk-live-4f9a2c7e1b8d3f6a0e5c';
  const redact = createRedactor([key]);
  const base64 = (text: string) => Buffer.from(text).toString('base64');

  it('hides a key quoted with all but its last characters, or truncated after its first half', () => {
    expect(redact(`Incorrect API key provided: ${key.slice(0, -4)}****.`)).toBe(
      'Incorrect API key provided: [redacted]****.',
    );
    expect(redact(`key ${key.slice(0, 12)}...${key.slice(-3)} refused`)).toBe(
      `key [redacted]...${key.slice(-3)} refused`,
    );
    // A vendor prefix alone identifies nothing and stays readable.
    expect(redact('keys look like sk-live-…')).toBe('keys look like sk-live-…');
  });

  it('hides a key in base64 and URL-safe base64 at every byte alignment, e.g. inside a Basic auth header', () => {
    for (const user of ['', 'a:', 'ab:', 'abc:']) {
      const encoded = base64(`${user}${key}`);
      for (const form of [encoded, encoded.replaceAll('+', '-').replaceAll('/', '_')]) {
        const redacted = redact(`Authorization: Basic ${form}`);
        expect(redacted).toContain('[redacted]');
        // At most the character that mixes in the user's bits, and the last partial one with padding, remain.
        expect(
          redacted.replace('Authorization: Basic ', '').replace('[redacted]', '').replace(/=+$/, '').length,
        ).toBeLessThanOrEqual(Math.ceil((user.length * 8) / 6) + 1);
      }
    }
    expect(redact(`token=${base64(key)}`)).toBe('token=[redacted]');
  });

  it('hides a key in lower and upper case hex, and a hex or base64 form cut short', () => {
    const hex = Buffer.from(key).toString('hex');
    expect(redact(`hex ${hex} HEX ${hex.toUpperCase()}`)).toBe('hex [redacted] HEX [redacted]');
    expect(redact(`dump ${hex.slice(0, 30)}`)).toBe('dump [redacted]');
    expect(redact(`b64 ${base64(key).slice(0, 20)}`)).toBe('b64 [redacted]');
  });

  it('hides the token of a "Bearer <token>" value in every form, and leaves other bearer tokens alone', () => {
    const bearer = createRedactor(['Bearer tok-0123456789abcdef']);
    expect(bearer(`auth Bearer tok-0123456789ab`)).toBe('auth Bearer [redacted]');
    expect(bearer(Buffer.from('tok-0123456789abcdef').toString('hex'))).toBe('[redacted]');
    expect(bearer('Bearer eyJhbGciOiJIUzI1NiJ9')).toBe('Bearer eyJhbGciOiJIUzI1NiJ9');
  });

  it('keeps a text without secrets as it is, and hides the longest overlapping form', () => {
    const both = createRedactor([key, `${key}-and-more-0123`]);
    expect(both(`a ${key}-and-more-0123 b ${key} c`)).toBe('a [redacted] b [redacted] c');
    const text = 'nothing secret here: sk-live is a prefix, 736b2d6c is hex of four bytes';
    expect(redact(text)).toBe(text);
    // An encoding hides no fewer of the key's characters than the key itself: the vendor prefix stays.
    const vendor = `${Buffer.from('sk-live-4f9').toString('hex')} ${Buffer.from('sk-live-4f9').toString('base64')}`;
    expect(redact(vendor)).toBe(vendor);
  });
});

describe('configSecrets', () => {
  it('collects provider keys, API tokens, the metrics listener token, the Redis password, headers but the plain ones, and by name: MCP env and variables', () => {
    const config = configParser().parse(`
providers:
  - { name: a, kind: openai, model: m, api_key: sk-provider-key-1234, headers: { x-org-id: org-header-value-1, accept: application/json, anthropic-version: 2023-06-01-x } }
mcp_servers:
  - { name: s, command: node, env: { SERVICE_KEY: mcp-env-secret-123, ROOT_DIR: /srv/projects/all } }
  - { name: h, url: "https://mcp.example/mcp", headers: { authorization: "Bearer mcp-header-token-1" } }
api: { tokens: [api-token-0123456789] }
redis: { url: "redis://:redis-password-1@127.0.0.1:6379" }
telemetry: { metrics: { worker_token: worker-metrics-token-1 } }
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
        'worker-metrics-token-1',
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
