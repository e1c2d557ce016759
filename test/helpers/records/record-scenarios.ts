import type { WorkerProcess } from '../../../src/testing/worker-process.js';
import { type ScenarioWorld, waitUntil } from './scenario-world.js';

/** The ids a fixture's test needs to find its runs again. */
export type FixtureSubjects = Record<string, string>;

/**
 * A state of Ratchet worth checking in as records: its config (scripted models, so the replay is the same),
 * and how to get there by running it. The fixture test (test/integration/record-fixtures.int.test.ts)
 * finishes what each one leaves.
 */
export interface RecordScenario {
  /** The fixture's file name, without `.json`. */
  name: string;
  /** What the records hold, for the fixture's README. */
  description: string;
  config: Record<string, unknown>;
  /** Starts the work, waits until the records are in the state to keep, and stops every worker. */
  record(world: ScenarioWorld): Promise<FixtureSubjects>;
}

const scripted = (name: string, script: Record<string, unknown>) => ({
  name,
  kind: 'scripted',
  model: 'test',
  ...script,
});

async function exitedBy(worker: WorkerProcess, signal: NodeJS.Signals, what: string): Promise<void> {
  const exit = await Promise.race([
    worker.exited,
    new Promise<undefined>((resolveLate) => setTimeout(() => resolveLate(undefined), 60_000).unref()),
  ]);
  if (exit?.signal !== signal) {
    throw new Error(`the worker was to exit by ${signal} ${what}; it did not:\n${worker.output()}`);
  }
}

async function stopped(worker: WorkerProcess): Promise<void> {
  const exit = await worker.stop();
  if (exit.code !== 0)
    throw new Error(`the worker did not stop cleanly (${JSON.stringify(exit)}):\n${worker.output()}`);
}

const askUser: RecordScenario = {
  name: 'ask-user',
  description:
    'a run parked on `ask_user` (its step in the delayed set, the question pending); the worker stopped by SIGTERM',
  config: {
    providers: [
      scripted('model', {
        replies: [
          {
            text: 'one question first',
            tool_calls: [
              { name: 'ask_user', arguments: { question: 'Which colour?', options: ['red', 'blue'] } },
            ],
          },
          { text: 'painted it' },
        ],
      }),
    ],
    agents: [
      { name: 'painter', description: 'asks, then paints', instructions: 'You paint.', provider: 'model' },
    ],
  },
  async record(world) {
    const worker = world.spawnWorker();
    const { runId, sessionId } = await world.engine.startRun({ input: 'paint the door' });
    await waitUntil(
      async () => (await world.engine.getRun(runId))?.status === 'waiting_input',
      60_000,
      'the question',
    );
    await stopped(worker);
    return { session_id: sessionId, run_id: runId };
  },
};

const toolInFlight: RecordScenario = {
  name: 'tool-in-flight',
  description:
    'a run mid tool loop: iteration 1 called `add` and has its result, iteration 2 called `slow_echo`, and ' +
    'the worker was SIGKILLed inside that call (crash point `tool.mid_call@2`): intent recorded, no outcome, ' +
    'the job active under a lock that expires',
  config: {
    providers: [
      scripted('model', {
        replies: [
          { tool_calls: [{ id: 'call_add', name: 'add', arguments: { a: 2, b: 3 } }] },
          { tool_calls: [{ id: 'call_echo', name: 'slow_echo', arguments: { text: 'five', delay_ms: 20 } }] },
          { text: 'the sum is five' },
        ],
      }),
    ],
    agents: [
      {
        name: 'calculator',
        description: 'adds',
        instructions: 'You add.',
        provider: 'model',
        toolboxes: ['test'],
      },
    ],
  },
  async record(world) {
    const worker = world.spawnWorker({ crashAt: 'tool.mid_call@2' });
    const { runId, sessionId } = await world.engine.startRun({ input: 'add 2 and 3, then say it' });
    await exitedBy(worker, 'SIGKILL', 'in the second tool call');
    return { session_id: sessionId, run_id: runId };
  },
};

const childInFlight: RecordScenario = {
  name: 'child-in-flight',
  description:
    'a run whose delegation to `helper` is in flight: the parent step parked waiting for its child, and ' +
    "the child's first iteration taken by a worker SIGKILLed before its model call " +
    '(crash point `iteration.before_model_call@2`)',
  config: {
    providers: [
      scripted('model-lead', {
        replies: [
          {
            tool_calls: [{ name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'find the key' } }],
          },
          { text: 'the helper found it' },
        ],
      }),
      scripted('model-helper', { default: { text: 'found the key under the mat' } }),
    ],
    agents: [
      { name: 'lead', description: 'delegates', instructions: 'You lead.', provider: 'model-lead' },
      {
        name: 'helper',
        description: 'finds things',
        instructions: 'You find things.',
        provider: 'model-helper',
      },
    ],
  },
  async record(world) {
    const worker = world.spawnWorker({ crashAt: 'iteration.before_model_call@2' });
    const { runId, sessionId } = await world.engine.startRun({ input: 'where is the key?', agent: 'lead' });
    await exitedBy(worker, 'SIGKILL', "at the child's model call");
    const child = (await world.engine.runTree(runId))?.runs.find((run) => run.parent_run_id === runId);
    if (!child) throw new Error('the delegation made no child run');
    return { session_id: sessionId, run_id: runId, child_run_id: child.run_id };
  },
};

const sessionData: RecordScenario = {
  name: 'session-data',
  description:
    'a session whose finished run wrote state (`state_set`), a task (`task_create`) and a note (`note_write`)',
  config: {
    providers: [
      scripted('model', {
        replies: [
          {
            tool_calls: [
              { id: 'set_plan', name: 'state_set', arguments: { key: 'plan', value: { steps: [1, 2] } } },
              {
                id: 'new_task',
                name: 'task_create',
                arguments: { title: 'paint the door', description: 'red' },
              },
              {
                id: 'new_note',
                name: 'note_write',
                arguments: { name: 'colour', content: 'the door is red' },
              },
            ],
          },
          { text: 'noted' },
          // The run the fixture test starts in the session.
          {
            tool_calls: [
              { id: 'get_plan', name: 'state_get', arguments: { key: 'plan' } },
              { id: 'list_tasks', name: 'task_list', arguments: {} },
              { id: 'read_note', name: 'note_read', arguments: { name: 'colour' } },
            ],
          },
          { text: 'read it all' },
        ],
      }),
    ],
    agents: [
      {
        name: 'keeper',
        description: 'keeps session data',
        instructions: 'You keep notes.',
        provider: 'model',
        toolboxes: ['state', 'tasks', 'notes'],
      },
    ],
  },
  async record(world) {
    const worker = world.spawnWorker();
    const { runId, sessionId } = await world.engine.startRun({
      input: 'remember the plan',
      metadata: { customer: 'fixture' },
    });
    const run = await world.engine.waitForRun(runId, { timeoutMs: 60_000 });
    if (run.status !== 'completed') throw new Error(`the run ended ${run.status}:\n${worker.output()}`);
    await stopped(worker);
    return { session_id: sessionId, run_id: runId };
  },
};

/** Every fixture a version checks in, in the order they are recorded. */
export const recordScenarios: readonly RecordScenario[] = [askUser, toolInFlight, childInFlight, sessionData];
