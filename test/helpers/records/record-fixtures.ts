import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { startRedisServer } from '../find-redis.js';
import { type FixtureSubjects, type RecordScenario, recordScenarios } from './record-scenarios.js';
import { type DumpedKey, dumpRedis } from './redis-dump.js';
import { fixturePrefix, ScenarioWorld } from './scenario-world.js';
import { fingerprintsPath, packageVersionOf, writeFingerprints } from './schema-fingerprints.js';

const repoRoot = resolve(import.meta.dirname, '../../..');

/** Where the fixtures of every version are: one folder per package version. */
export const recordsRoot = join(repoRoot, 'test/fixtures/records');

/** One fixture file: what a scenario left in Redis, key by key, and the ids to find its runs. */
export interface RecordFixture {
  ratchet_version: string;
  scenario: string;
  description: string;
  redis_version: string;
  recorded_at: string;
  prefix: string;
  /** The config the scenario ran with, without its `redis`, `worker` and `retention` sections (the replay's own). */
  config: Record<string, unknown>;
  subjects: FixtureSubjects;
  keys: DumpedKey[];
}

/** Every version that has fixtures, and its fixture files (README aside), in name order. */
export function fixtureVersions(): { version: string; files: string[] }[] {
  return readdirSync(recordsRoot, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => ({
      version: entry.name,
      files: readdirSync(join(recordsRoot, entry.name))
        .filter((name) => name.endsWith('.json'))
        .sort(),
    }))
    .sort((a, b) => a.version.localeCompare(b.version, 'en', { numeric: true }));
}

export function readFixture(version: string, file: string): RecordFixture {
  return JSON.parse(readFileSync(join(recordsRoot, version, file), 'utf8')) as RecordFixture;
}

/** Runs one scenario on a redis-server of its own and returns what it left there. */
export async function recordScenario(scenario: RecordScenario, version: string): Promise<RecordFixture> {
  const server = await startRedisServer();
  const world = new ScenarioWorld({ config: scenario.config, redisUrl: server.url });
  const reader = new Redis(server.url, { lazyConnect: true });
  reader.on('error', () => {});
  try {
    const subjects = await scenario.record(world);
    await reader.connect();
    const info = await reader.info('server');
    const keys = await dumpRedis(reader);
    return {
      ratchet_version: version,
      scenario: scenario.name,
      description: scenario.description,
      redis_version: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown',
      recorded_at: new Date().toISOString(),
      prefix: fixturePrefix,
      config: scenario.config,
      subjects,
      keys,
    };
  } finally {
    reader.disconnect();
    await world.close();
    await server.stop();
  }
}

/** Records every scenario into `test/fixtures/records/<version>/`, replacing what was there. */
export async function recordFixtures(
  options: { version?: string; say?: (line: string) => void } = {},
): Promise<string> {
  const version = options.version ?? packageVersionOf();
  const say = options.say ?? (() => {});
  const folder = join(recordsRoot, version);
  // First the shapes: a changed one without a migration stops here, before any fixture is replaced.
  const fingerprints = await writeFingerprints();
  say(`fingerprints of ${Object.keys(fingerprints).length} record kinds in ${fingerprintsPath}`);
  const fixtures: RecordFixture[] = [];
  for (const scenario of recordScenarios) {
    say(`recording ${scenario.name} …`);
    const fixture = await recordScenario(scenario, version);
    say(`  ${fixture.keys.length} keys`);
    fixtures.push(fixture);
  }
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  for (const fixture of fixtures) {
    writeFileSync(join(folder, `${fixture.scenario}.json`), `${JSON.stringify(fixture, null, 1)}\n`);
  }
  writeFileSync(join(folder, 'README.md'), readme(version, fixtures));
  formatJson(folder);
  formatJson(fingerprintsPath);
  return folder;
}

/** The files as the repository's formatter writes them, so `npm run lint` passes on a fresh recording. */
function formatJson(path: string): void {
  const biome = join(repoRoot, 'node_modules/.bin/biome');
  const formatted = spawnSync(biome, ['format', '--write', path], { cwd: repoRoot, encoding: 'utf8' });
  if (formatted.status !== 0) throw new Error(`biome format failed:\n${formatted.stdout}${formatted.stderr}`);
}

function readme(version: string, fixtures: readonly RecordFixture[]): string {
  const lines = [
    `# Redis records of Ratchet ${version}`,
    '',
    'Written by `npm run fixtures:record` (`scripts/record-fixtures.ts`), not by hand: each scenario of',
    '`test/helpers/records/record-scenarios.ts` ran on a redis-server of its own, with worker processes of this',
    'version and scripted models, until the state below; then every key of that Redis was written out as data',
    '(its type, value and time to live; `test/helpers/records/redis-dump.ts`).',
    '',
    '`test/integration/record-fixtures.int.test.ts` loads each file into a fresh redis-server and finishes its',
    'runs with the current code. Do not edit these files: a change of a record shape needs a migration',
    '(docs/operations.md, "Upgrading Ratchet"), and these records must keep finishing.',
    '',
    '| file | keys | what |',
    '| ---- | ---- | ---- |',
    ...fixtures.map(
      (fixture) => `| \`${fixture.scenario}.json\` | ${fixture.keys.length} | ${fixture.description} |`,
    ),
    '',
  ];
  return lines.join('\n');
}
