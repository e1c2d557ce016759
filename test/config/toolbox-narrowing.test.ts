import './register-fake-provider.js';
import { describe, expect, it } from 'vitest';
import type { KnownToolbox } from '../../src/config/index.js';
import { configParser } from './config-parser.js';

const known: KnownToolbox[] = [
  'utils',
  { name: 'git', tools: [{ name: 'git_status' }, { name: 'git_diff' }, { name: 'git_commit' }] },
  // A toolbox whose tools are not known when the config loads (an MCP server, say).
  { name: 'remote' },
];

const { parse, problemsOf } = configParser({ knownToolboxes: known });

function configWith(toolboxes: string, extra = ''): string {
  return `
providers:
  - { name: default, kind: fake, model: m }
agents:
  - name: coder
    provider: default
    toolboxes: ${toolboxes}
${extra}`;
}

describe('toolbox narrowing in agents', () => {
  it('accepts names and {name, tools} entries, and skills with their defaults', () => {
    const config = parse(configWith('[utils, {name: git, tools: [git_status, git_diff]}, {name: remote}]'));
    expect(config.agents[0]?.toolboxes).toEqual([
      'utils',
      { name: 'git', tools: ['git_status', 'git_diff'] },
      { name: 'remote' },
    ]);
    expect(config.agents[0]?.skills).toEqual([]);
    expect(config.skills).toEqual({ dir: '.ratchet/skills' });
  });

  it('names the path of an unknown tool, with a hint or the toolbox tools', () => {
    expect(problemsOf(configWith('[utils, {name: git, tools: [git_stauts, push]}]'))).toEqual([
      'agents[0].toolboxes[1].tools[0]: unknown tool "git_stauts" in toolbox "git" (did you mean "git_status"?)',
      'agents[0].toolboxes[1].tools[1]: unknown tool "push" in toolbox "git" (its tools: git_status, git_diff, git_commit)',
    ]);
  });

  it('checks the toolbox name of an entry, and leaves tools unchecked where they are not known', () => {
    expect(
      problemsOf(configWith('[{name: gitt, tools: [git_status]}, {name: remote, tools: [anything]}]')),
    ).toEqual(['agents[0].toolboxes[0].name: unknown toolbox "gitt" (did you mean "git"?)']);
  });

  it('says what an entry should look like', () => {
    expect(problemsOf(configWith('[utils, 3, {name: git, tools: []}]'))).toEqual([
      'agents[0].toolboxes[1]: expected a toolbox name, or {name, tools: [tool names]} for some of its tools',
      'agents[0].toolboxes[2].tools: must not be empty',
    ]);
  });

  it('validates skills settings', () => {
    expect(problemsOf(configWith('[utils]', 'skills: { dir: "", folder: x }'))).toEqual([
      'skills.dir: must not be empty',
      'skills.folder: unknown key (expected one of: dir)',
    ]);
  });
});
