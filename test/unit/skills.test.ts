import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import '../../src/models/index.js';
import { ConfigError, parseConfigText } from '../../src/config/index.js';
import { silentLogger } from '../../src/log/index.js';
import { loadSkills, parseSkill } from '../../src/skills/index.js';
import { type AnyTool, defineTool, type ToolBox } from '../../src/tools/index.js';
import { buildAgents } from '../../src/worker/index.js';

let directory: string | undefined;
afterEach(() => {
  if (directory) rmSync(directory, { recursive: true, force: true });
  directory = undefined;
});

/** A config directory with `.ratchet/skills/<name>/SKILL.md` for each entry. */
function skillsDir(skills: Record<string, string>): string {
  directory = mkdtempSync(join(tmpdir(), 'ratchet-skills-'));
  for (const [name, text] of Object.entries(skills)) {
    mkdirSync(join(directory, '.ratchet/skills', name), { recursive: true });
    writeFileSync(join(directory, '.ratchet/skills', name, 'SKILL.md'), text);
  }
  return directory;
}

const skill = (name: string, description: string | undefined, body: string) =>
  `---\nname: ${name}\n${description === undefined ? '' : `description: ${description}\n`}---\n${body}\n`;

describe('parseSkill', () => {
  it('reads the front-matter and the body', () => {
    expect(parseSkill(skill('deploy', 'Ships a release', '1. Build\n2. Push'), 'deploy', 'f')).toEqual({
      name: 'deploy',
      description: 'Ships a release',
      body: '1. Build\n2. Push',
      file: 'f',
    });
    expect(
      parseSkill(skill('style', undefined, 'Use short names.'), 'style', 'f').description,
    ).toBeUndefined();
  });

  it.each([
    ['no front-matter', 'just steps', 'must start with a front-matter block'],
    ['bad YAML', '---\nname: [x\n---\nsteps', 'front-matter is not valid YAML'],
    ['no name', '---\ndescription: d\n---\nsteps', 'front-matter: name: required'],
    [
      'unknown key',
      '---\nname: deploy\nsummary: d\n---\nsteps',
      'front-matter: (root): Unrecognized key: "summary"',
    ],
    [
      'another name',
      skill('ship', 'd', 'steps'),
      'front-matter name "ship" differs from its folder "deploy"',
    ],
    ['no steps', skill('deploy', 'd', '   '), 'has no steps after its front-matter'],
  ])('refuses a SKILL.md with %s', (_case, text, message) => {
    expect(() => parseSkill(text, 'deploy', 'f')).toThrow(message);
  });
});

describe('loadSkills', () => {
  it('lists every problem with the file it is in, and keeps the good skills', () => {
    const dir = skillsDir({ good: skill('good', 'd', 'steps'), broken: 'no front-matter' });
    mkdirSync(join(dir, '.ratchet/skills/empty'));
    const loaded = loadSkills(join(dir, '.ratchet/skills'));
    expect(loaded.skills.map((entry) => entry.name)).toEqual(['good']);
    expect(loaded.problems).toEqual([
      `${join(dir, '.ratchet/skills/broken/SKILL.md')}: must start with a front-matter block: a line "---", "name: …" and "description: …", a line "---"`,
      `${join(dir, '.ratchet/skills/empty')}: a skill folder needs a SKILL.md`,
    ]);
  });

  it('finds no skills in a folder that does not exist', () => {
    expect(loadSkills('/nonexistent/skills')).toEqual({ skills: [], problems: [] });
  });
});

describe('buildAgents with skills and narrowed toolboxes', () => {
  const config = (agents: string) =>
    parseConfigText(
      [
        'providers:',
        '  - { name: script, kind: scripted, model: m, replies: [{ text: hi }] }',
        'agents:',
        agents,
      ].join('\n'),
      { env: {}, configDir: '.' },
    ).config;

  it('offers described skills through load_skill and inlines the others, per agent', () => {
    const dir = skillsDir({
      deploy: skill('deploy', 'Ships a release', '1. Build\n2. Push'),
      review: skill('review', 'Reviews a change', '1. Read the diff'),
      style: skill('style', undefined, 'Use short names.'),
    });
    const agents = buildAgents(
      config(
        [
          '  - { name: all, provider: script, instructions: "You help." }',
          '  - { name: some, provider: script, skills: [deploy] }',
          '  - { name: plain, provider: script, skills: [style] }',
        ].join('\n'),
      ),
      dir,
      [],
      silentLogger(),
    );
    const loadSkill = (agent: string) => agents.get(agent)?.tools.find((tool) => tool.name === 'load_skill');
    expect(loadSkill('all')?.inputSchema).toMatchObject({
      properties: { name: { enum: ['deploy', 'review'] } },
    });
    expect(loadSkill('all')?.description).toContain('- review: Reviews a change');
    expect(loadSkill('some')?.inputSchema).toMatchObject({ properties: { name: { enum: ['deploy'] } } });
    expect(loadSkill('plain')).toBeUndefined();
    expect(agents.get('all')?.instructions).toBe('You help.\n\n## Skill: style\n\nUse short names.');
    expect(agents.get('some')?.instructions).toBe('');
    expect(agents.get('plain')?.instructions).toBe('## Skill: style\n\nUse short names.');
  });

  it('fails at start on unknown skill names and malformed skills, naming each', () => {
    const dir = skillsDir({ deploy: skill('deploy', 'd', 'steps'), bad: '---\nname: bad\n---\n' });
    const build = () =>
      buildAgents(
        config('  - { name: a, provider: script, skills: [deplyo, missing] }'),
        dir,
        [],
        silentLogger(),
      );
    expect(build).toThrow(ConfigError);
    expect(build).toThrow(
      [
        `invalid config skills (${join(dir, '.ratchet/skills')}):`,
        `  - ${join(dir, '.ratchet/skills/bad/SKILL.md')}: has no steps after its front-matter`,
        '  - agents[0].skills[0]: unknown skill "deplyo" (did you mean "deploy"?)',
        '  - agents[0].skills[1]: unknown skill "missing" (known skills: deploy)',
      ].join('\n'),
    );
  });

  it('narrows a toolbox to the listed tools, keeping the toolbox order', () => {
    const agents = buildAgents(
      config('  - { name: a, provider: script, toolboxes: [{ name: utils, tools: [word_count] }] }'),
      '.',
      [],
      silentLogger(),
    );
    expect(agents.get('a')?.tools.map((tool) => tool.name)).toEqual([
      'word_count',
      'ask_user',
      'report_progress',
    ]);
    expect(() =>
      buildAgents(
        config('  - { name: a, provider: script, toolboxes: [{ name: utils, tools: [count] }] }'),
        '.',
        [],
        silentLogger(),
      ),
    ).toThrow('agents[0].toolboxes[0].tools[0]: unknown tool "count" in toolbox "utils"');
  });

  it('narrows a toolbox whose tools change (an MCP server that may be down at start) whenever it is read', () => {
    const listed: AnyTool[] = [];
    const remote: ToolBox = {
      name: 'remote',
      dynamic: true,
      get tools() {
        return listed;
      },
    };
    const tool = (name: string) =>
      defineTool({
        name,
        description: name,
        inputSchema: z.strictObject({}),
        idempotent: true,
        handler: async () => name,
      });
    // Nothing listed yet: the worker still starts, and the agent is offered none of the server's tools.
    const agents = buildAgents(
      config('  - { name: a, provider: script, toolboxes: [{ name: remote, tools: [search] }] }'),
      '.',
      [remote],
      silentLogger(),
    );
    const names = () => agents.get('a')?.tools.map((definition) => definition.name);
    expect(names()).toEqual(['ask_user', 'report_progress']);
    listed.push(tool('search'), tool('delete_everything'));
    expect(names()).toEqual(['search', 'ask_user', 'report_progress']);
  });
});
