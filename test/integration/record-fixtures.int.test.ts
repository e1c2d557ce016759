import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { type Message, textOf, toolResultsOf } from '../../src/chat/index.js';
import { type OwnRedis, startRedisServer } from '../helpers/find-redis.js';
import { fixtureVersions, type RecordFixture, readFixture } from '../helpers/records/record-fixtures.js';
import { recordScenarios } from '../helpers/records/record-scenarios.js';
import { restoreRedis } from '../helpers/records/redis-dump.js';
import { ScenarioWorld } from '../helpers/records/scenario-world.js';
import { packageVersionOf } from '../helpers/records/schema-fingerprints.js';

/**
 * The records every earlier version checked in (test/fixtures/records/<version>/, `npm run fixtures:record`)
 * are loaded into a fresh Redis and finished by the current code: a worker of the next version resumes what
 * the previous one left (DESIGN rule 16).
 */

let server: OwnRedis | undefined;
let world: ScenarioWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
  await server?.stop();
  server = undefined;
});

async function loaded(fixture: RecordFixture): Promise<ScenarioWorld> {
  server = await startRedisServer();
  const writer = new Redis(server.url);
  try {
    await restoreRedis(writer, fixture.keys);
  } finally {
    writer.disconnect();
  }
  world = new ScenarioWorld({ config: fixture.config, redisUrl: server.url });
  return world;
}

function toolResult(chat: readonly Message[], callId: string) {
  return chat.flatMap(toolResultsOf).find((result) => result.tool_call_id === callId);
}

function subject(fixture: RecordFixture, name: string): string {
  const id = fixture.subjects[name];
  if (!id) throw new Error(`fixture ${fixture.scenario} of ${fixture.ratchet_version} has no ${name}`);
  return id;
}

/** How each scenario is finished, and what finishing it must show. */
const finishers: Record<string, (world: ScenarioWorld, fixture: RecordFixture) => Promise<void>> = {
  'ask-user': async (w, fixture) => {
    const runId = subject(fixture, 'run_id');
    const sessionId = subject(fixture, 'session_id');
    const waiting = await w.engine.getRun(runId);
    expect(waiting?.status).toBe('waiting_input');
    expect(waiting?.pending_question).toMatchObject({ kind: 'ask_user', question: 'Which colour?' });
    const worker = w.spawnWorker();
    await w.engine.respond(sessionId, waiting?.pending_question?.id ?? '', 'red');
    const run = await w.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status, worker.output()).toBe('completed');
    expect(run.result).toBe('painted it');
    const chat = await w.engine.readChat(sessionId);
    expect(chat.flatMap(toolResultsOf).map((result) => result.content)).toEqual(['red']);
    expect(await w.engine.listQuestions(sessionId)).toEqual([]);
  },
  'tool-in-flight': async (w, fixture) => {
    const runId = subject(fixture, 'run_id');
    const sessionId = subject(fixture, 'session_id');
    expect((await w.engine.getRun(runId))?.status).toBe('running');
    const worker = w.spawnWorker();
    const run = await w.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status, worker.output()).toBe('completed');
    expect(run.result).toBe('the sum is five');
    const chat = await w.engine.readChat(sessionId);
    expect(JSON.parse(toolResult(chat, 'call_add')?.content ?? 'null')).toEqual({ sum: 5 });
    // slow_echo is idempotent: the call interrupted by the kill ran again, once, with its result recorded once.
    expect(toolResult(chat, 'call_echo')).toMatchObject({ content: 'five', is_error: false });
    expect(chat.flatMap(toolResultsOf)).toHaveLength(2);
    const ends = (await w.engine.readEvents(sessionId)).filter((event) => event.kind === 'tool_call_end');
    expect(ends).toHaveLength(2);
  },
  'child-in-flight': async (w, fixture) => {
    const runId = subject(fixture, 'run_id');
    const childId = subject(fixture, 'child_run_id');
    expect((await w.engine.getRun(childId))?.status).toBe('queued');
    const worker = w.spawnWorker();
    const run = await w.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status, worker.output()).toBe('completed');
    expect(run.result).toBe('the helper found it');
    const child = await w.engine.getRun(childId);
    expect(child).toMatchObject({ status: 'completed', result: 'found the key under the mat' });
    const tree = await w.engine.runTree(runId);
    expect(tree?.runs.map((node) => node.run_id).sort()).toEqual([childId, runId].sort());
  },
  'session-data': async (w, fixture) => {
    const sessionId = subject(fixture, 'session_id');
    expect(await w.engine.sessionState(sessionId)).toEqual({ plan: { steps: [1, 2] } });
    expect(await w.engine.sessionTasks(sessionId)).toMatchObject([
      { title: 'paint the door', description: 'red', status: 'pending' },
    ]);
    expect(await w.engine.sessionNotes(sessionId)).toMatchObject([
      { name: 'colour', scope: 'session', content: 'the door is red' },
    ]);
    expect((await w.engine.getSession(sessionId))?.metadata).toEqual({ customer: 'fixture' });
    // A new run of the session reads the same data through its tools.
    const worker = w.spawnWorker();
    const next = await w.engine.startRun({ sessionId, input: 'what do we know?' });
    const run = await w.engine.waitForRun(next.runId, { timeoutMs: 60_000 });
    expect(run.status, worker.output()).toBe('completed');
    const chat = await w.engine.readChat(sessionId);
    expect(JSON.parse(toolResult(chat, 'get_plan')?.content ?? 'null')).toMatchObject({
      value: { steps: [1, 2] },
    });
    expect(toolResult(chat, 'list_tasks')?.content).toContain('paint the door');
    expect(toolResult(chat, 'read_note')?.content).toContain('the door is red');
    expect(textOf(chat.at(-1) ?? { parts: [] })).toBe('read it all');
  },
};

for (const { version, files } of fixtureVersions()) {
  describe(`records of Ratchet ${version}`, () => {
    it('has a finisher for each scenario, and the version being made has every scenario recorded', () => {
      const scenarios = files.map((file) => file.replace(/\.json$/, '')).sort();
      expect(scenarios.filter((name) => !(name in finishers))).toEqual([]);
      if (version === packageVersionOf()) {
        expect(scenarios, 'run `npm run fixtures:record`').toEqual(
          recordScenarios.map(({ name }) => name).sort(),
        );
      }
    });
    for (const file of files) {
      const fixture = readFixture(version, file);
      it(`finishes ${fixture.scenario}: ${fixture.description}`, async () => {
        const finish = finishers[fixture.scenario];
        if (!finish) throw new Error(`no finisher for scenario ${fixture.scenario}`);
        expect(fixture.ratchet_version).toBe(version);
        await finish(await loaded(fixture), fixture);
      });
    }
  });
}
