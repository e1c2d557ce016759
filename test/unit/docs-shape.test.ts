import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The docs are part of the product: a table cut in two by a blank line renders its second half as a
// paragraph of pipes, and a sentence pasted twice reads as a mistake. Both happened in docs/config.md.
const repoRoot = resolve(import.meta.dirname, '../..');
const documents = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** Line numbers of tables (runs of `|` lines outside code fences) whose second line is not a separator. */
function tablesWithoutHeader(text: string): number[] {
  const bad: number[] = [];
  let inFence = false;
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? '';
    if (line.trimStart().startsWith('```')) inFence = !inFence;
    if (inFence || !line.trimStart().startsWith('|')) continue;
    const previous = lines[index - 1] ?? '';
    if (previous.trimStart().startsWith('|')) continue;
    const separator = lines[index + 1] ?? '';
    if (!/^\s*\|(\s*:?-+:?\s*\|)+\s*$/.test(separator)) bad.push(index + 1);
  }
  return bad;
}

/** Sentences of prose (code fences and tables left out) that appear more than once in one document. */
function repeatedSentences(text: string): string[] {
  const prose = text
    .replace(/```[\s\S]*?```/g, '')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('|'))
    .join(' ')
    .replace(/\s+/g, ' ');
  const seen = new Set<string>();
  const repeated: string[] = [];
  for (const sentence of prose.split(/(?<=[.:;])\s+/)) {
    if (sentence.length < 60) continue;
    if (seen.has(sentence)) repeated.push(sentence);
    seen.add(sentence);
  }
  return repeated;
}

describe('the docs', () => {
  it.each(documents)('%s: every table has its header row, none is cut by a blank line', (document) => {
    expect(tablesWithoutHeader(readFileSync(join(repoRoot, document), 'utf8'))).toEqual([]);
  });

  it.each(documents)('%s: no sentence is written twice', (document) => {
    expect(repeatedSentences(readFileSync(join(repoRoot, document), 'utf8'))).toEqual([]);
  });
});
