// Registers the built-in provider kinds (anthropic, scripted …), as a worker does.
import '../../src/models/index.js';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ConfigError, parseConfigText } from '../../src/config/index.js';
import { parseScript } from '../../src/models/scripted/index.js';

// Users copy docs/config.md's snippets into their files: each ```yaml block is a config that loads on its
// own, every provider and agent it names defined in it. A block that is deliberately a part says so on its
// first line, and is still checked as what it is:
// - `# part of a config …`: top-level sections, checked inside a config that has one provider and one agent
//   (which the part may not define: a block with agents is whole);
// - `# a script file …`: the scripted model's script, checked as one.

const repoRoot = resolve(import.meta.dirname, '../..');
const partMarker = '# part of a config';
const scriptMarker = '# a script file';

interface Snippet {
  /** Where the block starts in docs/config.md (the line of its fence). */
  line: number;
  text: string;
}

function yamlSnippets(markdown: string): Snippet[] {
  const snippets: Snippet[] = [];
  const lines = markdown.split('\n');
  for (let index = 0; index < lines.length; index++) {
    if (lines[index]?.trim() !== '```yaml') continue;
    const end = lines.findIndex((line, at) => at > index && line.trim() === '```');
    if (end === -1) throw new Error(`docs/config.md: the yaml block at line ${index + 1} is not closed`);
    snippets.push({ line: index + 1, text: `${lines.slice(index + 1, end).join('\n')}\n` });
    index = end;
  }
  return snippets;
}

/** Every variable a snippet refers to, set: the snippets show `${VAR}` where a secret goes. */
function environmentFor(text: string): NodeJS.ProcessEnv {
  const names = [...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}/g)].map(([, name]) => name);
  // A webhook's secret must be a Standard Webhooks secret: whsec_ and base64.
  const variableValue = (name: string | undefined) =>
    name?.endsWith('WEBHOOK_SECRET')
      ? 'whsec_ZXhhbXBsZS1leGFtcGxlLWV4YW1wbGUtZXhhbXBsZQ=='
      : `example-${name?.toLowerCase()}`;
  return Object.fromEntries(names.map((name) => [name, variableValue(name)]));
}

/** The config a `# part of a config` block is checked in. */
const surroundings = {
  providers: [{ name: 'main', kind: 'scripted', model: 'script', replies: [{ text: 'Done.' }] }],
  agents: [{ name: 'assistant', provider: 'main' }],
};

/** The problems of a snippet, checked as what its first line says it is; [] when it is fine. */
function problemsOf(snippet: Snippet): string[] {
  const firstLine = snippet.text.split('\n')[0] ?? '';
  const env = environmentFor(snippet.text);
  try {
    if (firstLine.startsWith(scriptMarker)) {
      parseScript(parse(snippet.text), `docs/config.md:${snippet.line}`);
      return [];
    }
    let text = snippet.text;
    if (firstLine.startsWith(partMarker)) {
      const part = parse(snippet.text) as Record<string, unknown>;
      const taken = Object.keys(part).filter((key) => key in surroundings);
      if (taken.length > 0) return [`a part may not define ${taken.join(', ')}: make the block whole`];
      text = stringify({ ...surroundings, ...part });
    }
    parseConfigText(text, { env, configDir: '/configs', sourceName: `docs/config.md:${snippet.line}` });
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    return [String(error)];
  }
}

const snippets = yamlSnippets(readFileSync(resolve(repoRoot, 'docs/config.md'), 'utf8'));

describe("docs/config.md's yaml snippets", () => {
  it('are there (the extraction finds them)', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(15);
  });

  it.each(snippets.map((snippet) => [snippet.line, snippet] as const))(
    'the block at line %i loads on its own, or as the part it says it is',
    (_line, snippet) => {
      expect(problemsOf(snippet)).toEqual([]);
    },
  );

  it('the check catches a provider or agent named but not defined, in whole blocks and parts', () => {
    const whole = {
      line: 0,
      text: 'providers:\n  - { name: main, kind: scripted, model: s, replies: [{ text: hi }] }\nagents:\n  - { name: cashier, provider: default }\n',
    };
    expect(problemsOf(whole)).toEqual([
      expect.stringMatching(/^agents\[0\]\.provider: unknown provider "default"/),
    ]);
    const part = {
      line: 0,
      text: `${partMarker}\nteams:\n  - name: t\n    members: [{ agent: writer }]\n    coordinator: { kind: sequence }\n`,
    };
    expect(problemsOf(part).join('\n')).toMatch(/writer/);
    const partWithAgents = { line: 0, text: `${partMarker}\nagents: []\n` };
    expect(problemsOf(partWithAgents)).toEqual(['a part may not define agents: make the block whole']);
    const script = { line: 0, text: `${scriptMarker}\nreplies:\n  - { txt: hi }\n` };
    expect(problemsOf(script).join('\n')).toMatch(/txt/);
  });
});
