import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { RatchetError } from '../../src/errors/index.js';
import { silentLogger } from '../../src/log/index.js';
import { loadScript, scriptedProviderKind } from '../../src/models/scripted/index.js';
import { neverAborted, request, toolResult, user } from './chat-builder.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

function thrown(action: () => unknown): RatchetError {
  try {
    action();
  } catch (error) {
    if (error instanceof RatchetError) return error;
    throw error;
  }
  throw new Error('expected an error');
}

describe('loadScript', () => {
  it('reads a YAML script', () => {
    expect(loadScript(join(fixtures, 'script.yaml'))).toEqual({
      replies: [
        { text: 'Let me add those.', tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
        { text: 'The sum is 3.' },
      ],
      rules: [{ when: { role: 'tool', contains: 'error' }, reply: { text: 'I saw an error' } }],
      default: { text: 'Nothing more to say.' },
    });
  });

  it('reads a JSON script', () => {
    expect(loadScript(join(fixtures, 'script.json'))).toEqual({
      replies: [
        { text: 'from json', tool_calls: [{ name: 'add', arguments_raw: '{not json', id: 'call_x' }] },
      ],
    });
  });

  it('lists every problem with the file and the path inside it', () => {
    const file = join(fixtures, 'invalid-script.yaml');
    const error = thrown(() => loadScript(file));
    expect(error.code).toBe('config_invalid');
    const lines = error.message.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/invalid-script\.yaml: replies\[2\]\.tool_calls\[0\]\.name: Invalid input/);
    expect(lines[1]).toMatch(/invalid-script\.yaml: replies\[2\]\.fail\[0\]\.kind: /);
  });

  it('names the file when it is not valid YAML or cannot be read', () => {
    const directory = mkdtempSync(join(tmpdir(), 'ratchet-script-'));
    try {
      // Written here, not kept as a fixture, so the formatter never sees a broken YAML file.
      const file = join(directory, 'broken.yaml');
      writeFileSync(file, 'replies:\n  - text: "unterminated\n');
      const broken = thrown(() => loadScript(file));
      expect(broken.code).toBe('config_invalid');
      expect(broken.message).toMatch(/broken\.yaml: not valid YAML/);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
    const missing = thrown(() => loadScript(join(fixtures, 'missing.yaml')));
    expect(missing.message).toMatch(/missing\.yaml: cannot read the script/);
  });

  it('rejects unknown keys and both argument forms', () => {
    const directory = mkdtempSync(join(tmpdir(), 'ratchet-script-'));
    try {
      const file = join(directory, 'script.json');
      const script = {
        replies: [{ txt: 'typo', tool_calls: [{ name: 'a', arguments: {}, arguments_raw: '{}' }] }],
      };
      writeFileSync(file, JSON.stringify(script));
      const message = thrown(() => loadScript(file)).message;
      expect(message).toMatch(/replies\[0\]: Unrecognized key: "txt"/);
      expect(message).toMatch(/replies\[0\]\.tool_calls\[0\]: give `arguments` or `arguments_raw`, not both/);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe('scriptedProviderKind.fieldsSchema', () => {
  const { fieldsSchema } = scriptedProviderKind;
  const messagesOf = (fields: unknown): string[] => {
    const parsed = fieldsSchema.safeParse(fields);
    return parsed.success
      ? []
      : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  };

  it('accepts a script file or an inline script', () => {
    expect(messagesOf({ script: 'script.yaml', record_calls: 'calls.jsonl' })).toEqual([]);
    expect(messagesOf({ replies: [{ text: 'hi' }] })).toEqual([]);
    expect(messagesOf({ default: { text: 'hi' } })).toEqual([]);
  });

  it('requires exactly one of them', () => {
    expect(messagesOf({ script: 'script.yaml', replies: [{ text: 'hi' }] })).toEqual([
      'script: give either `script` (a file) or an inline script (`replies`, `rules`, `default`), not both',
    ]);
    expect(messagesOf({})).toEqual([expect.stringMatching(/needs `script` .* or an inline `replies`/)]);
    expect(messagesOf({ record_calls: 'calls.jsonl' })).toEqual([expect.stringMatching(/needs `script`/)]);
    expect(messagesOf({ replies: [] })).toEqual([expect.stringMatching(/inline script is empty/)]);
  });

  it('rejects unknown fields and invalid inline replies', () => {
    expect(messagesOf({ script: 'a.yaml', scripts: 'b.yaml' })).toEqual([': Unrecognized key: "scripts"']);
    expect(messagesOf({ replies: [{ text: 1 }] })).toEqual([
      expect.stringMatching(/^replies\.0\.text: Invalid input/),
    ]);
  });
});

describe('scriptedProviderKind.create', () => {
  let directory: string | undefined;
  afterEach(() => {
    if (directory) rmSync(directory, { recursive: true, force: true });
    directory = undefined;
  });
  const base = { name: 'demo', kind: 'scripted', model: 'scripted' };

  it('loads the script and writes record_calls relative to the config directory', async () => {
    directory = mkdtempSync(join(tmpdir(), 'ratchet-provider-'));
    copyFileSync(join(fixtures, 'script.yaml'), join(directory, 'script.yaml'));
    const model = scriptedProviderKind.create(
      { ...base, script: 'script.yaml', record_calls: 'out/calls.jsonl' },
      { configDir: directory, logger: silentLogger() },
    );
    const completion = await model.complete(
      request([user('hi'), toolResult('c', 'an error')]),
      neverAborted(),
    );
    expect(completion.parts).toEqual([{ type: 'text', text: 'I saw an error' }]);
    expect(
      readFileSync(join(directory, 'out', 'calls.jsonl'), 'utf8')
        .trimEnd()
        .split('\n'),
    ).toHaveLength(1);
  });

  it('uses an inline script', async () => {
    const model = scriptedProviderKind.create(
      { ...base, replies: [{ text: 'inline' }] },
      { configDir: '/nonexistent', logger: silentLogger() },
    );
    expect((await model.complete(request([user('hi')]), neverAborted())).parts).toEqual([
      { type: 'text', text: 'inline' },
    ]);
  });

  it('fails at create time on a bad script file', () => {
    const error = thrown(() =>
      scriptedProviderKind.create(
        { ...base, script: 'invalid-script.yaml' },
        { configDir: fixtures, logger: silentLogger() },
      ),
    );
    expect(error.code).toBe('config_invalid');
    expect(error.message).toMatch(/replies\[2\]\.tool_calls\[0\]\.name/);
  });
});
