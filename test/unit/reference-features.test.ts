import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// docs/reference-features.md is the answer to "is every feature of the reference design in Ratchet?". A
// summary that no longer matches its rows, a row without a place, or a row naming a file that was moved reads
// as an answer it is not: this test keeps the page honest as the code moves.
const repoRoot = resolve(import.meta.dirname, '../..');
const pagePath = join(repoRoot, 'docs/reference-features.md');
const page = readFileSync(pagePath, 'utf8');

const marks = ['yes', 'different', 'partial', 'missing'] as const;
type Mark = (typeof marks)[number];

interface Row {
  line: number;
  feature: string;
  mark: string;
  where: string;
}

/** The body rows of every table on the page (header and separator rows left out). */
function tableRows(text: string): Row[] {
  const rows: Row[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? '';
    if (!line.startsWith('|')) continue;
    const separator = /^\|(\s*:?-+:?\s*\|)+\s*$/;
    const isHeader = separator.test(lines[index + 1] ?? '');
    if (isHeader || separator.test(line)) continue;
    const cells = line
      .slice(1, line.lastIndexOf('|'))
      .split('|')
      .map((cell) => cell.trim());
    rows.push({ line: index + 1, feature: cells[0] ?? '', mark: cells[1] ?? '', where: cells[2] ?? '' });
  }
  return rows;
}

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a page's headings (lines in code fences are not headings; a repeated one gets `-1`, `-2`). */
function anchorsOf(markdownPath: string): Set<string> {
  const anchors = new Set<string>();
  let inFence = false;
  for (const line of readFileSync(markdownPath, 'utf8').split('\n')) {
    if (line.trimStart().startsWith('```')) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6} (.+)$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1] ?? '');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

const rows = tableRows(page);

describe('docs/reference-features.md', () => {
  it('has one row per feature, each with a known mark and a "where"', () => {
    expect(rows.length).toBeGreaterThan(150);
    const bad = rows.filter(
      (row) => !marks.includes(row.mark as Mark) || row.where === '' || row.feature === '',
    );
    expect(bad).toEqual([]);
    const features = rows.map((row) => row.feature);
    expect(features.filter((feature, index) => features.indexOf(feature) !== index)).toEqual([]);
  });

  it('states the counts of its rows in its summary', () => {
    const summary =
      /\*\*Summary: (\d+) features: (\d+) yes, (\d+) different, (\d+) partial, (\d+) missing\.\*\*/.exec(
        page,
      );
    expect(summary).not.toBeNull();
    const counted = Object.fromEntries(
      marks.map((mark) => [mark, rows.filter((row) => row.mark === mark).length]),
    );
    expect({
      total: Number(summary?.[1]),
      yes: Number(summary?.[2]),
      different: Number(summary?.[3]),
      partial: Number(summary?.[4]),
      missing: Number(summary?.[5]),
    }).toEqual({ total: rows.length, ...counted });
  });

  it('names a test for every feature it marks yes', () => {
    const untested = rows.filter((row) => row.mark === 'yes' && !/`test\/[^`]+`/.test(row.where));
    expect(untested.map((row) => `${row.line}: ${row.feature}`)).toEqual([]);
  });

  it('names only files and folders of the repository that exist', () => {
    const paths = [...page.matchAll(/`((?:src|test|docs|templates|config|examples)\/[^`\s]*)`/g)].map(
      (match) => match[1] ?? '',
    );
    expect(paths.length).toBeGreaterThan(100);
    expect(paths.filter((path) => !existsSync(join(repoRoot, path)))).toEqual([]);
  });

  it('links only to pages and headings that exist', () => {
    const broken: string[] = [];
    for (const [, target = ''] of page.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const [file = '', anchor] = target.split('#');
      const linked = file === '' ? pagePath : resolve(dirname(pagePath), file);
      if (!existsSync(linked)) broken.push(target);
      else if (anchor !== undefined && linked.endsWith('.md') && !anchorsOf(linked).has(anchor))
        broken.push(target);
    }
    expect(broken).toEqual([]);
  });

  it('stands alone: it does not send readers outside the repository', () => {
    expect(page).not.toMatch(/\.\.\/shared|shared\/reference/);
  });
});
