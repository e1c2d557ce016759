import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/index.js';
import '../../src/models/index.js';
import { decideUpgrade } from '../../src/workflows/core/upgrade-decision.js';
import { agentEntryOf, changedFields, definitionsOf } from '../../src/workflows/index.js';

// Decision 0030: a definition is the resolved config of a name, hashed over its canonical JSON, without
// secrets; whether a run moves to another one is a pure decision.

function config(text: string, env: NodeJS.ProcessEnv = {}) {
  return parseConfigText(text, { env, configDir: '/tmp' }).config;
}

const base = `
providers:
  - name: model
    kind: scripted
    model: test
    replies: [{ text: ok }]
agents:
  - name: helper
    provider: model
    instructions: Help.
`;

describe('agent definitions', () => {
  it('give one hash for one definition, whatever the key order or the rest of the config', () => {
    const one = definitionsOf(config(base)).get('helper');
    const other = definitionsOf(
      config(`${base}  - name: other\n    provider: model\nmax_delegation_depth: 3\n`),
    ).get('helper');
    expect(one?.hash).toMatch(/^[0-9a-f]{32}$/);
    // Another agent in the config changes what helper may delegate to, not helper's entry.
    expect(other?.hash).toBe(one?.hash);
    const changed = definitionsOf(config(base.replace('Help.', 'Help more.'))).get('helper');
    expect(changed?.hash).not.toBe(one?.hash);
    expect(changedFields(one?.definition as never, changed?.definition as never)).toEqual(['instructions']);
  });

  it('record the provider by name with its model and parameters, never a key, URL or header', () => {
    const text = `
providers:
  - name: hosted
    kind: openai
    model: gpt-x
    api_key: \${OPENAI_API_KEY}
    base_url: https://gateway.example/v1
    headers: { X-Team: \${TEAM_TOKEN} }
    max_tokens: 500
agents:
  - name: helper
    provider: hosted
    instructions: "Use \${PLAIN_VALUE} and cost $3."
`;
    const env = {
      OPENAI_API_KEY: 'sk-secret-1234',
      TEAM_TOKEN: 'team-token-5678',
      PLAIN_VALUE: 'a-plain-value',
    };
    const recorded = definitionsOf(config(text, env)).get('helper');
    expect(recorded?.definition.providers).toEqual({
      hosted: { kind: 'openai', model: 'gpt-x', max_tokens: 500 },
    });
    for (const value of Object.values(env)) expect(recorded?.text).not.toContain(value);
    expect(recorded?.definition.entry.instructions).toBe(`Use \${PLAIN_VALUE} and cost $$3.`);
    // A worker reads it back with its own environment.
    const entry = agentEntryOf(recorded?.definition as never, 'helper', { PLAIN_VALUE: 'here' });
    expect(entry.instructions).toBe('Use here and cost $3.');
    expect(() => agentEntryOf(recorded?.definition as never, 'helper', {})).toThrow(/PLAIN_VALUE/);
  });
});

describe('the upgrade decision', () => {
  const pinText = base;
  const upgradeText = base.replace(
    '    instructions: Help.',
    '    instructions: Help.\n    options: { on_change: upgrade }',
  );
  const pinned = definitionsOf(config(pinText)).get('helper');
  const upgrading = definitionsOf(config(upgradeText)).get('helper');
  const next = definitionsOf(config(upgradeText.replace('Help.', 'Help v2.'))).get('helper');
  const run = (hash: string, kept?: string) => ({
    definition: { hash, recorded_at: '2026-01-01T00:00:00.000Z', ...(kept ? { kept } : {}) },
  });

  it('keeps a pinned run without a word, and moves it when asked after it took its definition', () => {
    if (!pinned || !next) throw new Error('no definitions');
    const input = { run: run(pinned.hash), recorded: pinned.definition, current: next };
    expect(decideUpgrade({ ...input, requestedAt: null })).toBeUndefined();
    expect(decideUpgrade({ ...input, requestedAt: '2025-12-31T00:00:00.000Z' })).toBeUndefined();
    expect(decideUpgrade({ ...input, requestedAt: '2026-01-02T00:00:00.000Z' })).toEqual({
      from: pinned.hash,
      to: next.hash,
      changed: ['instructions', 'options'],
      reason: undefined,
    });
  });

  it('moves an upgrade run to the current definition, and keeps it (once) when its agent is gone', () => {
    if (!upgrading || !next) throw new Error('no definitions');
    const input = { recorded: upgrading.definition, requestedAt: null };
    expect(decideUpgrade({ ...input, run: run(upgrading.hash), current: next })).toMatchObject({
      to: next.hash,
      changed: ['instructions'],
    });
    expect(decideUpgrade({ ...input, run: run(upgrading.hash), current: upgrading })).toBeUndefined();
    expect(decideUpgrade({ ...input, run: run(upgrading.hash), current: undefined })).toMatchObject({
      to: undefined,
      reason: expect.stringContaining('"helper"'),
    });
    expect(decideUpgrade({ ...input, run: run(upgrading.hash, 'gone'), current: undefined })).toBeUndefined();
  });
});
