import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiHarness } from '../api/api-harness.js';
import { runExample as runNamedExample } from '../helpers/run-example.js';

// docs/client.md's example and the README's are examples/client.ts (the docs import the package name, the
// example the source), and the example works against a live API and worker as written. (The README's block
// also runs as written against the packed package: test/package/packed-tarball.int.test.ts.)

const repoRoot = resolve(import.meta.dirname, '../..');
const examplePath = resolve(repoRoot, 'examples/client.ts');

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

function docExample(): string {
  const doc = readFileSync(resolve(repoRoot, 'docs/client.md'), 'utf8');
  const block = /^## Example\n[\s\S]*?^```ts\n([\s\S]*?)^```$/m.exec(doc)?.[1];
  if (block === undefined) throw new Error('docs/client.md has no ```ts block under ## Example');
  return block;
}

/** The ```ts block under the README's "## Typed client". */
function readmeExample(): string {
  const readme = readFileSync(resolve(repoRoot, 'README.md'), 'utf8');
  const block = /^## Typed client\n[\s\S]*?^```ts\n([\s\S]*?)^```$/m.exec(readme)?.[1];
  if (block === undefined) throw new Error('README.md has no ```ts block under ## Typed client');
  return block;
}

/** examples/client.ts, run from the repository as a user runs it. */
const runExample = (env: Record<string, string>) => runNamedExample('client.ts', { cwd: repoRoot, env });

describe('the example of docs/client.md', () => {
  it('is examples/client.ts, with the package name in the import', () => {
    const example = readFileSync(examplePath, 'utf8');
    expect(example).toContain("from '../src/client/index.js'");
    expect(docExample()).toBe(example.replace("'../src/client/index.js'", "'ratchet/client'"));
    expect(docExample().trimEnd().split('\n').length).toBeLessThanOrEqual(15);
  });

  it("is the README's example too, in at most 15 lines", () => {
    expect(readmeExample()).toBe(docExample());
    expect(readmeExample().trimEnd().split('\n').length).toBeLessThanOrEqual(15);
  });

  it('submits, follows the events, answers the question and prints the result against a live API', async () => {
    api = await ApiHarness.start({
      script: {
        replies: [
          { tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
          { tool_calls: [{ name: 'ask_user', arguments: { question: 'When do you travel?' } }] },
          { text: 'Lisbon, next weekend: booked.' },
        ],
      },
    });
    const { code, stdout, stderr } = await runExample({ RATCHET_URL: api.url });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toBe(
      [
        'agent calls add',
        'agent calls ask_user',
        'agent asks: When do you travel?',
        'completed Lisbon, next weekend: booked.',
        '',
      ].join('\n'),
    );
    // The model read the example's answer.
    const lastCall = api.harness.modelCalls().at(-1);
    expect(lastCall?.messages.at(-1)?.text).toContain('Next weekend');
  });
});
