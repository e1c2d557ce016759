import { describe, expect, it } from 'vitest';
import { providerConfigSchema } from '../../../src/config/provider-config-schema.js';
import { knownProviderKinds, resolveContextWindow } from '../../../src/models/index.js';

function issuesOf(entry: Record<string, unknown>): string[] {
  const parsed = providerConfigSchema.safeParse(entry);
  return parsed.success
    ? []
    : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

describe('provider entries of the SDK kinds', () => {
  it('registers every kind', () => {
    expect(knownProviderKinds()).toEqual(
      expect.arrayContaining(['anthropic', 'openai', 'gemini', 'grok', 'openai_compatible', 'scripted']),
    );
  });

  it('accepts every field', () => {
    const entry = {
      name: 'claude',
      kind: 'anthropic',
      model: 'claude-sonnet-4-5',
      api_key: 'sk-ant-xyz',
      base_url: 'https://gateway.example.com/anthropic/v1',
      temperature: 0.5,
      max_tokens: 4096,
      headers: { 'x-gateway-team': 'ratchet' },
      timeout_ms: 120_000,
      first_token_timeout_ms: 30_000,
      idle_timeout_ms: 20_000,
      context_window: 200_000,
      rate_limit: { rpm: 50, input_tpm: 40_000, output_tpm: 8000, max_retries: 5, base_delay_ms: 1000 },
    };
    // rate_limit is a base field of every entry, validated by the config schema; the kind takes the rest.
    expect(providerConfigSchema.parse(entry)).toMatchObject(entry);
  });

  it('reports unknown keys, a missing key and bad values, all at once', () => {
    const issues = issuesOf({
      name: 'gpt',
      kind: 'openai',
      model: 'gpt-4.1',
      temprature: 0.2,
      timeout_ms: -1,
      base_url: 'ftp://example.com',
    });
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^api_key: /),
        expect.stringMatching(/^temprature: /),
        expect.stringMatching(/^timeout_ms: /),
        expect.stringMatching(/^base_url: /),
      ]),
    );
  });

  it('bounds the stall timeouts: from 100 ms to a day, each error naming the key and the limit', () => {
    const entry = {
      name: 'local',
      kind: 'openai_compatible',
      model: 'llama3.1',
      base_url: 'http://127.0.0.1:1/v1',
    };
    expect(issuesOf({ ...entry, first_token_timeout_ms: 100, idle_timeout_ms: 86_400_000 })).toEqual([]);
    expect(issuesOf({ ...entry, first_token_timeout_ms: 99, idle_timeout_ms: 86_400_001 })).toEqual([
      expect.stringMatching(/^first_token_timeout_ms: .*100/),
      'idle_timeout_ms: must be at most 86400000 (1 day)',
    ]);
    expect(issuesOf({ ...entry, idle_timeout_ms: 1.5 })).toEqual([
      expect.stringMatching(/^idle_timeout_ms: /),
    ]);
    // Only the kinds that make HTTP requests have them.
    expect(
      issuesOf({ name: 's', kind: 'scripted', model: 'test', script: 'script.json', idle_timeout_ms: 1000 }),
    ).toEqual([expect.stringMatching(/^idle_timeout_ms: /)]);
  });

  it('openai_compatible: no key needed, base_url required, provider_name allowed', () => {
    expect(
      issuesOf({
        name: 'local',
        kind: 'openai_compatible',
        model: 'llama3.1',
        base_url: 'http://127.0.0.1:11434/v1',
      }),
    ).toEqual([]);
    expect(
      issuesOf({
        name: 'local',
        kind: 'openai_compatible',
        model: 'llama3.1',
        base_url: 'http://127.0.0.1:8080/v1',
        provider_name: 'llamacpp',
      }),
    ).toEqual([]);
    expect(issuesOf({ name: 'local', kind: 'openai_compatible', model: 'llama3.1' })).toEqual([
      expect.stringMatching(/^base_url: /),
    ]);
    expect(
      issuesOf({ name: 'x', kind: 'grok', model: 'grok-4', api_key: 'k', provider_name: 'nope' }),
    ).toEqual([expect.stringMatching(/^provider_name: /)]);
  });
});

describe('resolveContextWindow', () => {
  it('explicit context_window > default_context_windows[kind] > built-in default > 0', () => {
    const defaults = { openai: 400_000, openai_compatible: 32_768 };
    expect(
      resolveContextWindow({
        provider: { kind: 'openai', context_window: 64_000 },
        defaultContextWindows: defaults,
      }),
    ).toBe(64_000);
    expect(resolveContextWindow({ provider: { kind: 'openai' }, defaultContextWindows: defaults })).toBe(
      400_000,
    );
    expect(
      resolveContextWindow({ provider: { kind: 'openai_compatible' }, defaultContextWindows: defaults }),
    ).toBe(32_768);
    expect(resolveContextWindow({ provider: { kind: 'anthropic' }, defaultContextWindows: defaults })).toBe(
      200_000,
    );
    expect(resolveContextWindow({ provider: { kind: 'gemini' } })).toBe(1_048_576);
    expect(resolveContextWindow({ provider: { kind: 'grok' } })).toBe(131_072);
    expect(resolveContextWindow({ provider: { kind: 'openai' } })).toBe(128_000);
    expect(resolveContextWindow({ provider: { kind: 'scripted' } })).toBe(0);
    expect(resolveContextWindow({ provider: { kind: 'constructor' } })).toBe(0);
    expect(resolveContextWindow({ provider: { kind: 'anthropic', context_window: 0 } })).toBe(0);
  });
});
