import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { runExample } from '../helpers/run-example.js';

const repoRoot = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(resolve(repoRoot, path), 'utf8');

describe('examples/crash-test-my-tool.ts', () => {
  it('crash-tests the payments tool at two crash points and finds one charge and no difference', async () => {
    const { code, stdout, stderr } = await runExample('crash-test-my-tool.ts', {
      env: { REDIS_URL: inject('redisUrl') },
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toBe(
      [
        'crash test: no difference at 2 crash points',
        '  tool.mid_call: killed, same',
        '  tool.before_commit: killed, same',
        'charges: [{"key":"root-i1-t0","value":{"amount_cents":4200}}]',
        '',
      ].join('\n'),
    );
  });

  it('is what the README and docs/testing.md show: every line of their excerpts is in the example files', () => {
    const examples = [
      'examples/crash-test-my-tool.ts',
      'examples/payments-test-worker.ts',
      'examples/payments-toolbox.ts',
    ]
      .map(read)
      .join('\n');
    const excerpts = [
      ...blocksUnder(read('README.md'), '## Testing your own tools'),
      ...blocksUnder(read('docs/testing.md'), '## An example'),
    ];
    expect(excerpts.length).toBeGreaterThanOrEqual(3);
    for (const line of excerpts.flatMap((block) => block.split('\n'))) {
      const code = line.trim();
      // The excerpts import from the package (the example files from the sources) and may add comments.
      if (code === '' || code.startsWith('//') || code.startsWith('import ')) continue;
      expect(examples, `an excerpt's line is not in the example files: ${code}`).toContain(code);
    }
  });
});

/** The ```ts blocks of a Markdown section (up to the next heading of its level). */
function blocksUnder(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no section ${heading}`);
  const level = heading.split(' ')[0] ?? '##';
  const rest = markdown.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`^${level} `, 'm'));
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? '');
}
