import { describe, expect, it } from 'vitest';
import '../../src/models/index.js';
import { parseConfigText } from '../../src/config/index.js';
import { silentLogger } from '../../src/log/index.js';
import { createToolBox } from '../../src/tools/index.js';
import { buildAgents } from '../../src/worker/index.js';
import { runAgent } from '../../src/workflows/steps/runner/agent-runtime.js';
import { toolContext } from '../helpers/tool-calls.js';

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

  it("follows a run's recorded options.delegate default where the agent leaves it to the default (decision 0047)", () => {
    const built = (agents: string[]) => {
      const text = [
        'providers: [{ name: s, kind: scripted, model: m, replies: [{ text: hi }] }]',
        'agents:',
        ...agents.map((agent) => `  - ${agent}`),
      ].join('\n');
      const map = buildAgents(
        parseConfigText(text, { env: {}, configDir: '.' }).config,
        '.',
        [],
        silentLogger(),
      );
      return { agents: map, handoffs: new Map(), teams: new Map(), keyPrefix: 'ratchet' };
    };
    const names = (agent: { tools: readonly { name: string }[] }) => agent.tools.map((tool) => tool.name);
    const recorded = (delegates: boolean) => ({ lineage: [], delegate_default: delegates });
    // One agent here (default off); the run's tree started where there were several (on).
    const alone = built(['{ name: a, provider: s }']);
    expect(names(runAgent(alone, 'a'))).not.toContain('delegate_to_agent');
    expect(names(runAgent(alone, 'a', [], undefined, undefined, recorded(true)))).toEqual([
      'ask_user',
      'report_progress',
      'list_agents',
      'delegate_to_agent',
      'spawn_agents',
    ]);
    expect(runAgent(alone, 'a', [], undefined, undefined, recorded(false))).toBe(alone.agents.get('a'));
    // Several here (default on); the run's tree started with one (off). An agent that sets it keeps it.
    const several = built([
      '{ name: a, provider: s }',
      '{ name: b, provider: s, options: { delegate: true } }',
    ]);
    expect(names(runAgent(several, 'a', [], undefined, undefined, recorded(false)))).toEqual([
      'ask_user',
      'report_progress',
    ]);
    expect(names(runAgent(several, 'b', [], undefined, undefined, recorded(false)))).toContain(
      'spawn_agents',
    );
  });

  it('builds the built-in toolboxes from the tools section, for the agents that list them', async () => {
    const text = [
      'providers: [{ name: script, kind: scripted, model: m, replies: [{ text: hi }] }]',
      'agents: [{ name: coder, provider: script, toolboxes: [filesystem, http] }]',
      'tools: { workspace: ws, filesystem: { read_only: true } }',
    ].join('\n');
    const { config: loaded } = parseConfigText(text, { env: {}, configDir: '/configs' });
    const coder = buildAgents(loaded, '/configs', [], silentLogger()).get('coder');
    expect(coder?.tools.map((tool) => tool.name)).toEqual([
      'read_file',
      'write_file',
      'edit_file',
      'list_directory',
      'stat_path',
      'http_request',
      'ask_user',
      'report_progress',
    ]);
    const write = coder?.toolboxes[0]?.tools.find((tool) => tool.name === 'write_file');
    await expect(write?.handler(toolContext(), { path: 'a', content: 'b' })).rejects.toThrow(
      'tools.filesystem.read_only',
    );
  });

  it('refuses a toolbox registered from code under a built-in name', () => {
    expect(() => buildAgents(config(''), '.', [createToolBox('filesystem', [])], silentLogger())).toThrow(
      'two toolboxes are named "filesystem"',
    );
  });
});
