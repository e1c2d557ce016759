// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config text with ${VAR} references.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfigRaw, maxRawConfigBytes, parseConfigText } from '../../src/index.js';

const configText = `# The deployment's config: keep this comment
providers:
  - name: default
    kind: openai
    model: gpt-4o-mini
    api_key: \${OPENAI_API_KEY}   # from the environment, never written here
agents:
  - name: assistant
    provider: default
    instructions: You help.
    toolboxes: [utils]
redis:
  url: \${REDIS_URL:-redis://127.0.0.1:6379}
`;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ratchet-raw-config-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('loadConfigRaw', () => {
  it('round-trips an edit: the ${VAR} references and the comments stay, the edit is written', () => {
    const path = join(dir, 'ratchet.yaml');
    writeFileSync(path, configText);
    const raw = loadConfigRaw(path);
    expect(raw.path).toBe(path);
    // The value is the reference as written, not its value (no environment is read).
    expect(raw.document.getIn(['providers', 0, 'api_key'])).toBe('${OPENAI_API_KEY}');

    raw.document.setIn(['agents', 0, 'instructions'], 'You help, briefly.');
    raw.document.setIn(['agents', 0, 'toolboxes'], raw.document.createNode(['utils', 'filesystem']));
    writeFileSync(path, raw.toString());

    const written = readFileSync(path, 'utf8');
    expect(written).toContain("# The deployment's config: keep this comment");
    expect(written).toMatch(/api_key: \$\{OPENAI_API_KEY\} +# from the environment, never written here/);
    expect(written).toContain('url: ${REDIS_URL:-redis://127.0.0.1:6379}');
    expect(written).toContain('instructions: You help, briefly.');
    // The file written is still a valid config once expanded, with the edit in it.
    const loaded = parseConfigText(written, {
      env: { OPENAI_API_KEY: 'sk-test-raw-config-000000' },
      configDir: dir,
    });
    expect(loaded.config.agents[0]?.instructions).toBe('You help, briefly.');
    expect(loaded.config.agents[0]?.toolboxes).toEqual(['utils', 'filesystem']);
    expect(loaded.config.redis.url).toBe('redis://127.0.0.1:6379');
  });

  it('gives positions of values and of every environment reference', () => {
    const path = join(dir, 'ratchet.yaml');
    writeFileSync(path, configText);
    const raw = loadConfigRaw(path);
    expect(raw.positionOf(['agents', 0, 'instructions'])).toMatchObject({ line: 10, col: 19 });
    // A missing key is placed at its nearest existing ancestor.
    expect(raw.positionOf(['agents', 0, 'budget', 'max_cost_usd'])).toMatchObject({ line: 8 });
    expect(raw.envReferences.map(({ name, path: at, position }) => [name, at, position.line])).toEqual([
      ['OPENAI_API_KEY', ['providers', 0, 'api_key'], 6],
      ['REDIS_URL', ['redis', 'url'], 13],
    ]);
  });

  it('reports YAML errors with their line, a missing file, and a file over the size limit', () => {
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, 'agents:\n  - name: a\n   provider: x\n');
    expect(() => loadConfigRaw(broken)).toThrow(/line 3, column \d+/);
    expect(() => loadConfigRaw(join(dir, 'absent.yaml'))).toThrow(ConfigError);
    const huge = join(dir, 'huge.yaml');
    writeFileSync(huge, `# ${'x'.repeat(maxRawConfigBytes)}\n`);
    expect(() => loadConfigRaw(huge)).toThrow(`over the limit of ${maxRawConfigBytes}`);
  });
});
