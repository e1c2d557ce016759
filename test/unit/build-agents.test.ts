import { describe, expect, it } from 'vitest';
import '../../src/models/index.js';
import { parseConfigText } from '../../src/config/index.js';
import { silentLogger } from '../../src/log/index.js';
import { buildAgents } from '../../src/worker/index.js';

const config = (extra: string) =>
  parseConfigText(
    [
      'providers:',
      '  - { name: claude, kind: anthropic, model: m, api_key: k }',
      '  - { name: own, kind: anthropic, model: m, api_key: k, context_window: 1000 }',
      '  - { name: script, kind: scripted, model: m, replies: [{ text: hi }] }',
      'agents:',
      '  - { name: a, provider: claude }',
      '  - { name: b, provider: own }',
      '  - { name: c, provider: script }',
      extra,
    ].join('\n'),
    { env: {}, configDir: '.' },
  ).config;

describe('buildAgents', () => {
  it('resolves each model context window: explicit > default_context_windows > built-in > 0', () => {
    const windows = (text: string) =>
      [...buildAgents(config(text), '.', [], silentLogger()).values()].map(
        (agent) => agent.provider.contextWindow,
      );
    expect(windows('')).toEqual([200_000, 1000, 0]);
    expect(windows('default_context_windows: { anthropic: 50000, scripted: 4096 }')).toEqual([
      50_000, 1000, 4096,
    ]);
  });

  it('gives every agent the interaction tools after its own, and the delegation tools when there are others', () => {
    const agents = buildAgents(config(''), '.', [], silentLogger());
    expect(agents.get('a')?.tools.map((tool) => tool.name)).toEqual([
      'ask_user',
      'report_progress',
      'list_agents',
      'delegate_to_agent',
      'spawn_agents',
    ]);
  });

  it('leaves the delegation tools out when an agent opts out', () => {
    const text = [
      'providers: [{ name: s, kind: scripted, model: m, replies: [{ text: hi }] }]',
      'agents:',
      '  - { name: a, provider: s, options: { delegate: false } }',
      '  - { name: b, provider: s }',
    ].join('\n');
    const agents = buildAgents(
      parseConfigText(text, { env: {}, configDir: '.' }).config,
      '.',
      [],
      silentLogger(),
    );
    expect(agents.get('a')?.tools.map((tool) => tool.name)).toEqual(['ask_user', 'report_progress']);
    expect(agents.get('b')?.tools.map((tool) => tool.name)).toContain('spawn_agents');
  });
});
