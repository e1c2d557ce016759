// The summary of bench/ab.sh: for each row of sections A and B of `npm run bench`, the median over the
// rounds of each side (p50, rate, CPU of this process per job) and head's change against base.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

type Side = 'base' | 'head';
const metrics = ['p50 ms', 'rate', 'cpu µs/job'] as const;
const row =
  /^\s+((?:raw|Ratchet) .+?)\s{2,}(\d+)\s+\d+\s+\d+\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+([\d.]+) \S+\s+(\d+)\s+\d+/;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

/** One line per row of sections A and B found in `<side>-<round>.txt` files of `dir`. */
export function summarize(dir: string): string[] {
  const rows = new Map<string, Record<Side, number[][]>>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.txt'))) {
    const side = file.split('-')[0] as Side;
    let section = '';
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      section = /^([A-E])\. /.exec(line)?.[1] ?? section;
      const match = section === 'A' || section === 'B' ? row.exec(line) : null;
      if (!match) continue;
      const key = `${section} ${match[1]} @${match[2]}`;
      const entry = rows.get(key) ?? { base: [], head: [] };
      entry[side].push([Number(match[3]), Number(match[4]), Number(match[5])]);
      rows.set(key, entry);
    }
  }

  return [...rows].map(([key, sides]) => {
    const cells = metrics.map((metric, index) => {
      const base = median(sides.base.map((values) => values[index] as number));
      const head = median(sides.head.map((values) => values[index] as number));
      const change = ((head / base - 1) * 100).toFixed(0);
      const shown = (value: number) => Number(value.toFixed(2));
      return `${metric}: ${shown(base)} → ${shown(head)} (${change.startsWith('-') ? change : `+${change}`}%)`;
    });
    return `${key.padEnd(52)} n=${sides.base.length}/${sides.head.length}  ${cells.join('   ')}`;
  });
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: tsx bench/ab-summary.ts <results directory of bench/ab.sh>');
  for (const line of summarize(dir)) console.log(line);
}
