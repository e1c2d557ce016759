import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect } from 'vitest';

const readme = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');

/**
 * The output the README shows for a command: the first unlabelled code block after the block that holds
 * `command`. `…` in it stands for what changes between runs (ids, sizes, token counts): a line holding one
 * matches any line starting with the text before it, and a line that is only `…` stands for any lines.
 */
export function readmeOutput(command: string): string[] {
  const at = readme.indexOf(command);
  if (at < 0) throw new Error(`the README does not show ${command}`);
  const start = readme.indexOf('\n```\n', readme.indexOf('\n```', at) + 4);
  const end = readme.indexOf('\n```', start + 5);
  return readme.slice(start + 5, end).split('\n');
}

/** Every line the README shows is printed, in that order (other lines may come between them). */
export function expectPrintedAsInReadme(command: string, stdout: string): void {
  const printed = stdout.split('\n');
  let position = 0;
  for (const shown of readmeOutput(command)) {
    if (shown.trim() === '…') continue;
    const cut = shown.indexOf('…');
    const matches = (line: string) => (cut < 0 ? line === shown : line.startsWith(shown.slice(0, cut)));
    const found = printed.findIndex((line, index) => index >= position && matches(line));
    expect(found, `the README shows "${shown}" after line ${position} of:\n${stdout}`).toBeGreaterThanOrEqual(
      0,
    );
    position = found + 1;
  }
}
