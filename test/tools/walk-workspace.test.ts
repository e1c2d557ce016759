import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { walkWorkspace } from '../../src/tools/builtin/workspace/walk-workspace.js';
import { useTemporaryDirectory } from '../helpers/tool-calls.js';

describe('walkWorkspace', () => {
  const directory = useTemporaryDirectory('walk');

  it('yields to the event loop inside one big directory, even when the visitor never awaits', async () => {
    for (let index = 0; index < 40; index += 1) writeFileSync(`${directory.path}/file-${index}.txt`, '');
    let ticks = 0;
    const ticker = setInterval(() => {
      ticks += 1;
    }, 1);
    try {
      const summary = await walkWorkspace(
        {
          realRoot: directory.path,
          start: directory.path,
          signal: new AbortController().signal,
          maxFiles: 1_000,
        },
        () => {
          // Stands for matching a pattern against each name: 5 ms of synchronous work per file.
          const until = performance.now() + 5;
          while (performance.now() < until) {}
          return true;
        },
      );
      expect(summary).toEqual({ filesSeen: 40, stopped: false });
    } finally {
      clearInterval(ticker);
    }
    // 200 ms of work in one directory: without yields the interval never runs until the walk ends.
    expect(ticks).toBeGreaterThanOrEqual(3);
  });
});
