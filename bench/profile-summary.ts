/**
 * Where a CPU profile's time went, for `node --cpu-prof --import tsx bench/profile-tool-loop.ts`:
 *
 *   npx tsx bench/profile-summary.ts <file.cpuprofile> [jobs] [function-name]
 *
 * The samples taken while modules were still loading (tsx or Node's module loader on the stack) are left out.
 * Each busy sample is counted once, for the first frame up its stack that has a source file (native code such
 * as JSON.parse or a socket write counts for the JavaScript that called it): by library (ours, zod, ioredis,
 * BullMQ, Node), then by function of ours. With `jobs`, times are given per job too; with `function-name`,
 * that function's total time is split by the functions of ours that called it.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, jobsText, traced] = process.argv.slice(2);
if (!file) throw new Error('usage: bench/profile-summary.ts <file.cpuprofile> [jobs] [function-name]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const jobs = jobsText ? Number(jobsText) : undefined;
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);

function stackOf(id: number): ProfileNode[] {
  const stack: ProfileNode[] = [];
  for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
    const node = nodes.get(at);
    if (node) stack.push(node);
  }
  return stack;
}

const loading = (url: string) =>
  url.includes('/node_modules/tsx/') || url.includes('/esbuild/') || url.startsWith('node:internal/modules');

function libraryOf(url: string): string {
  if (url.includes('/node_modules/')) {
    const name = url.split('/node_modules/').at(-1)?.split('/')[0] ?? '';
    if (['ioredis', 'redis-parser', 'standard-as-callback', 'denque', 'cluster-key-slot'].includes(name))
      return 'ioredis';
    return name === 'msgpackr' ? 'bullmq' : name;
  }
  if (url.includes('/src/')) return 'ours (src)';
  if (url.includes('/bench/')) return 'bench';
  return url.startsWith('node:') ? 'node' : 'other';
}

const shortName = (node: ProfileNode) =>
  `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/^.*\/src\//, 'src/')}`;

// Samples are kept from the last one that loaded a module on.
let clock = 0;
let loadedAt = 0;
const times = profile.samples.map((id, index) => {
  clock += profile.timeDeltas[index] ?? 0;
  if (stackOf(id).some((node) => loading(node.callFrame.url))) loadedAt = clock;
  return clock;
});

const byLibrary = new Map<string, number>();
const byOwnFunction = new Map<string, number>();
const byCaller = new Map<string, number>();
let busy = 0;
const add = (map: Map<string, number>, key: string, micros: number) =>
  map.set(key, (map.get(key) ?? 0) + micros);
profile.samples.forEach((id, index) => {
  if ((times[index] ?? 0) <= loadedAt) return;
  const micros = profile.timeDeltas[index] ?? 0;
  const stack = stackOf(id);
  const leaf = stack[0]?.callFrame.functionName;
  if (leaf === '(idle)' || leaf === '(program)' || leaf === '(root)') return;
  busy += micros;
  if (leaf === '(garbage collector)') {
    add(byLibrary, 'garbage collector', micros);
    return;
  }
  const frame = stack.find((node) => node.callFrame.url !== '');
  add(byLibrary, frame ? libraryOf(frame.callFrame.url) : 'native', micros);
  if (frame && libraryOf(frame.callFrame.url) === 'ours (src)') add(byOwnFunction, shortName(frame), micros);
  if (traced) {
    const at = stack.findIndex((node) => node.callFrame.functionName === traced);
    if (at >= 0) {
      const caller = stack.slice(at + 1).find((node) => node.callFrame.url.includes('/src/'));
      add(byCaller, caller ? shortName(caller) : '(none of ours)', micros);
    }
  }
});

function print(title: string, map: Map<string, number>, limit: number): void {
  console.log(`\n${title}`);
  for (const [key, micros] of [...map].sort((a, b) => b[1] - a[1]).slice(0, limit)) {
    const perJob = jobs ? `${(micros / jobs).toFixed(1).padStart(7)} µs/job` : '';
    console.log(
      `${(micros / 1000).toFixed(0).padStart(7)} ms ${((100 * micros) / busy).toFixed(1).padStart(5)}%${perJob}  ${key}`,
    );
  }
}

console.log(
  `busy ${(busy / 1000).toFixed(0)} ms after ${(loadedAt / 1e6).toFixed(2)} s of loading` +
    (jobs ? `, ${(busy / jobs).toFixed(1)} µs per job` : ''),
);
print('by library', byLibrary, 20);
print('by function of ours (with the native code it called)', byOwnFunction, 40);
if (traced) print(`${traced}, by its nearest caller of ours`, byCaller, 20);
