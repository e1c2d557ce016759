import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { summarize } from '../../bench/ab-summary.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** The rows of `npm run bench` the summary reads, with one Ratchet p50, rate and CPU per job. */
function benchOutput(p50: number, rate: number, cpu: number): string {
  return [
    'A. one job vs a 1-iteration run (no tools)     in flight   units    jobs   p50 ms   p99 ms  mean ms               rate  cpu µs/job: node  redis',
    '  raw job, add → completed                            50    2000    2000    27.61    46.79    28.52        1721 jobs/s               547    300',
    `  Ratchet 1-iteration run, startRun → completed       50    2000    2000    ${p50}   122.53    65.23         ${rate} runs/s              ${cpu}    664`,
    'C. takeover after SIGKILL, 1 one after another',
    '  Ratchet 1-iteration run, startRun → completed       50    2000    2000    99.99   122.53    65.23         1 runs/s              1    664',
  ].join('\n');
}

describe('bench/ab-summary.ts', () => {
  it('gives the median of each side per row of sections A and B, and the change of head against base', () => {
    dir = mkdtempSync(join(tmpdir(), 'ratchet-ab-'));
    writeFileSync(join(dir, 'base-1.txt'), benchOutput(60, 700, 1200));
    writeFileSync(join(dir, 'base-2.txt'), benchOutput(64, 760, 1300));
    writeFileSync(join(dir, 'base-3.txt'), benchOutput(62, 740, 1250));
    writeFileSync(join(dir, 'head-1.txt'), benchOutput(66, 720, 1320));
    writeFileSync(join(dir, 'head-2.txt'), benchOutput(68, 700, 1400));
    writeFileSync(join(dir, 'head-3.txt'), benchOutput(70, 680, 1375));
    const lines = summarize(dir);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('A Ratchet 1-iteration run, startRun → completed @50');
    expect(lines[1]).toContain('n=3/3');
    // Section C's row with the same name is not counted.
    expect(lines[1]).toContain('p50 ms: 62 → 68 (+10%)');
    expect(lines[1]).toContain('rate: 740 → 700 (-5%)');
    expect(lines[1]).toContain('cpu µs/job: 1250 → 1375 (+10%)');
  });
});
