// `npm run bench:round-trips`: the Redis commands a tool-loop step costs (bench/round-trip-count.ts), with
// the worker's defaults (its dead worker watch included). A count, not a time: one run compares two checkouts.
import { type CommandRow, countRoundTrips } from './round-trip-count.js';

const runs = Number(process.env.BENCH_RUNS ?? 20);

function print(title: string, rows: readonly CommandRow[], total: number): void {
  console.log(`${title}: ${total.toFixed(2)} per step job`);
  for (const row of rows) console.log(`  ${row.name.padEnd(24)} ${row.perJob.toFixed(2)}`);
}

const count = await countRoundTrips({ runs });
console.log(
  `${count.iterations}-iteration tool loop, one run at a time; the difference of ${3 * runs} and ${runs} runs ` +
    `(${count.jobs} jobs); the bench's completion watcher (QueueEvents) not counted`,
);
print('Round trips (commands clients sent)', count.sent, count.roundTrips);
print('Commands inside Lua scripts', count.inScripts, count.scriptCommands);
console.log('By step kind (per job of the kind; a command counts for the step whose job id it named last):');
for (const row of count.byKind) {
  console.log(
    `  ${row.kind.padEnd(20)} ${row.roundTrips.toFixed(2)} round trips, ${row.scriptCommands.toFixed(2)} commands in scripts`,
  );
}
