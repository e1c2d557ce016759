import './register-fake-provider.js';
import { describe, expect, it } from 'vitest';
import { configHash } from '../../src/config/index.js';
import { configParser } from './config-parser.js';

const { parse } = configParser();

const config = (apiKey: string, options: { maxIterations?: number; password?: string } = {}) =>
  parse(
    [
      'providers: [{name: p, kind: fake, model: m}]',
      `agents: [{name: a, provider: p, options: {max_iterations: ${options.maxIterations ?? 10}}}]`,
      `redis: {url: "redis://:${options.password ?? 'hunter2'}@redis.internal:6380/2"}`,
      `api: {tokens: [${apiKey}]}`,
    ].join('\n'),
  );

describe('configHash (GET /v1/system config_hash)', () => {
  it('is 16 hex digits, the same for the same settings', () => {
    expect(configHash(config('token-aaaaaaaaaaaaaaaa'))).toMatch(/^[0-9a-f]{16}$/);
    expect(configHash(config('token-aaaaaaaaaaaaaaaa'))).toBe(configHash(config('token-aaaaaaaaaaaaaaaa')));
  });

  it('changes with a setting', () => {
    expect(configHash(config('token-aaaaaaaaaaaaaaaa', { maxIterations: 11 }))).not.toBe(
      configHash(config('token-aaaaaaaaaaaaaaaa')),
    );
  });

  it('says nothing about secrets: another API token or Redis password gives the same hash', () => {
    const base = configHash(config('token-aaaaaaaaaaaaaaaa'));
    expect(configHash(config('token-bbbbbbbbbbbbbbbb'))).toBe(base);
    expect(configHash(config('token-aaaaaaaaaaaaaaaa', { password: 'correct-horse' }))).toBe(base);
  });
});
