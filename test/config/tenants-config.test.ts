import './register-fake-provider.js';
import { describe, expect, it } from 'vitest';
import { apiTokens } from '../../src/config/index.js';
import { configParser } from './config-parser.js';

const { parse, problemsOf } = configParser();

const base = `
providers:
  - name: default
    kind: fake
    model: m
agents:
  - name: assistant
    provider: default
`;

describe('tenants and scoped tokens in the config (decision 0035)', () => {
  it('takes a tenants map with every setting, and weight 1 by default', () => {
    const config = parse(`${base}
tenants:
  default: { max_active_runs: 5 }
  acme: { max_active_runs: 50, tokens_per_minute: 200000, weight: 3 }
`);
    expect(config.tenants).toEqual({
      default: { max_active_runs: 5, weight: 1 },
      acme: { max_active_runs: 50, tokens_per_minute: 200_000, weight: 3 },
    });
    expect(parse(base).tenants).toEqual({});
  });

  it('names each bad tenant setting, and a bad tenant name', () => {
    const problems = problemsOf(`${base}
tenants:
  acme: { max_active_runs: 0, tokens_per_minute: -1, weight: 1001, burst: 3 }
  Not A Name: {}
`);
    expect(problems.join('\n')).toMatch(/tenants\.acme\.max_active_runs/);
    expect(problems.join('\n')).toMatch(/tenants\.acme\.tokens_per_minute/);
    expect(problems.join('\n')).toMatch(/tenants\.acme\.weight/);
    expect(problems.join('\n')).toMatch(/burst/);
    expect(problems.join('\n')).toMatch(/Not A Name|lower-case/);
  });

  it('takes plain and scoped api.tokens, and api.idempotency_ttl_s within its bound', () => {
    const config = parse(`${base}
api:
  tokens:
    - operator-token-0123456789
    - { token: acme-token-0123456789ab, tenant: acme }
  idempotency_ttl_s: 3600
`);
    expect(apiTokens(config.api.tokens)).toEqual([
      { token: 'operator-token-0123456789', tenant: undefined },
      { token: 'acme-token-0123456789ab', tenant: 'acme' },
    ]);
    expect(config.api.idempotency_ttl_s).toBe(3600);
    expect(parse(base).api.idempotency_ttl_s).toBe(86_400);
    const problems = problemsOf(`${base}
api:
  tokens:
    - { token: short, tenant: acme }
    - { token: acme-token-0123456789ab, tenant: ACME }
  idempotency_ttl_s: 2592001
`);
    expect(problems.join('\n')).toContain('api.tokens[0].token');
    expect(problems.join('\n')).toContain('api.tokens[1].tenant');
    expect(problems.join('\n')).toMatch(/api\.idempotency_ttl_s/);
  });
});
