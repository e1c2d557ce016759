import './register-fake-provider.js';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatConfigSummary, loadConfig, parseConfigText, redactUrl } from '../../src/config/index.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

describe('formatConfigSummary', () => {
  it('summarises providers, agents, redis and the worker without the redis password', () => {
    const path = join(fixtures, 'full.yaml');
    const loaded = loadConfig(path, { env: { FAKE_MODEL: 'big' }, cwd: fixtures });
    expect(formatConfigSummary(loaded)).toBe(
      [
        `config ${path}`,
        'providers:',
        '  default: kind fake, model big',
        '  cheap: kind fake, model fake-small',
        'agents:',
        '  planner: provider default, toolboxes search, files, max_iterations 25',
        '  helper: provider cheap, toolboxes none, max_iterations 10',
        'entry agent: helper',
        'redis: redis://:***@redis.internal:6380/2 (prefix team-a, 4 shards)',
        'worker: concurrency 3',
      ].join('\n'),
    );
  });

  it('names the first agent as entry agent when none is set', () => {
    const text = 'providers: [{name: p, kind: fake, model: m}]\nagents: [{name: a, provider: p}]\n';
    const summary = formatConfigSummary(parseConfigText(text, { env: {}, configDir: '/configs' }));
    expect(summary).toContain('entry agent: a\n');
    expect(summary).toContain('redis: redis://127.0.0.1:6379 (prefix ratchet, 1 shard)\n');
  });
});

describe('formatConfigSummary with webhooks', () => {
  it('names each webhook with its host and events, never its path or secret', () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const text = [
      'providers: [{name: p, kind: fake, model: m}]',
      'agents: [{name: a, provider: p}]',
      'webhooks:',
      `  - { url: "https://hooks.example.com/t/0123456789", events: [run_failed, ask_user], secret: "${secret}" }`,
    ].join('\n');
    const summary = formatConfigSummary(parseConfigText(text, { env: {}, configDir: '/configs' }));
    expect(summary).toContain('webhooks:\n  webhook-1: hooks.example.com (run_failed, ask_user)\n');
    expect(summary).not.toContain('0123456789');
    expect(summary).not.toContain(secret);
  });
});

describe('redactUrl', () => {
  it('hides passwords and keeps the rest', () => {
    expect(redactUrl('redis://user:secret@host:6379/0')).toBe('redis://user:***@host:6379/0');
    expect(redactUrl('rediss://host:6380')).toBe('rediss://host:6380');
    expect(redactUrl('not a url')).toBe('(unparseable url)');
  });
});

describe('formatConfigSummary with handoff groups and teams', () => {
  it('lists each group with its members and each team with its members, roles and coordinator', () => {
    const text = [
      'providers: [{ name: s, kind: fake, model: m }]',
      'agents: [{ name: a, provider: s }, { name: b, provider: s }]',
      'handoffs: [{ name: desk, members: [a, b], max_handoffs: 3 }]',
      'teams: [{ name: crew, members: [{ agent: a, role: lead }, { agent: desk }], coordinator: { kind: sequence } }]',
    ].join('\n');
    const summary = formatConfigSummary({
      ...parseConfigText(text, { env: {}, configDir: '.' }),
      path: 'ratchet.yaml',
    });
    expect(summary).toContain('handoff groups:\n  desk: a ⇄ b, max_handoffs 3\n');
    expect(summary).toContain('teams:\n  crew: a (lead), desk (member), coordinator sequence\n');
  });
});
