import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { engineFromConfig } from '../../src/engine/index.js';
import { silentLogger } from '../../src/log/index.js';
import { runKeys } from '../../src/redis/keys.js';
import { knownToolboxes } from '../../src/tools/builtin/index.js';
import { RatchetWorker } from '../../src/worker/index.js';
import { testContractRules } from '../fixtures/contract-rule-extensions.js';
import { testToolbox } from '../fixtures/test-tools.js';
import { waitFor, waitForExit } from '../helpers/crash-scenario.js';
import { spawnExtensionWorker } from '../helpers/extension-worker.js';
import { ExtensionWorld } from '../helpers/extension-world.js';

// Contracts as a library (decision 0042) on a real Redis: a rule kind written in code decides once and its
// verdict is recorded with the answer's commit (a worker killed after that commit does not make it decide
// again); the result's metadata names the schema version; a run is checked against the contract its
// definition recorded at its start, not the one a newer worker's config has.

const worlds: ExtensionWorld[] = [];
const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const cleanup of cleanups.splice(0)) await cleanup();
  for (const world of worlds.splice(0)) await world.close();
});

function configOf(rule: Record<string, unknown>, contract: Record<string, unknown> = {}) {
  return {
    providers: [
      { name: 'model', kind: 'scripted', model: 'test', default: { text: '{"summary": "all done"}' } },
    ],
    agents: [{ name: 'agent', provider: 'model' }],
    contracts: [
      {
        name: 'report',
        from_agent: 'agent',
        schema_version: '3',
        schema: {
          required: { summary: 'string' },
          rules: [{ kind: 'coin_rule', field: 'summary', ...rule }],
        },
        ...contract,
      },
    ],
  };
}

/** A file for the rule's calls, removed after the test. */
function ruleLog(): string {
  const log = join(tmpdir(), `ratchet-rule-${randomBytes(6).toString('hex')}.log`);
  cleanups.push(async () => rmSync(log, { force: true }));
  return log;
}

const picksIn = (log: string) => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []);

function spawnWorker(world: ExtensionWorld, crashAt?: string) {
  const worker = spawnExtensionWorker(world, 'test/fixtures/contract-rule-worker.ts', crashAt);
  children.push(worker.child);
  return worker;
}

describe('a contract rule written in code', () => {
  it("decides in the worker; its verdict and the contract's schema_version are in the result's metadata", async () => {
    const log = ruleLog();
    const world = new ExtensionWorld(configOf({ params: { log } }), { contractRules: testContractRules });
    worlds.push(world);
    await world.start();
    const { runId } = await world.engine.startRun({ input: 'report' });
    const run = await world.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(run.contract).toEqual({
      contract: 'report',
      valid: true,
      errors: [],
      warnings: [],
      schema_version: '3',
      rules: [{ kind: 'coin_rule', field: 'summary', valid: true }],
    });
    expect(run.schema_version).toBe('3');
    expect(picksIn(log)).toHaveLength(1);
  });

  it('is not asked again when the worker dies after its verdict was committed (SIGKILL at iteration.after_commit)', async () => {
    const log = ruleLog();
    const world = new ExtensionWorld(configOf({ params: { log, fail: true } }), {
      contractRules: testContractRules,
    });
    worlds.push(world);
    const { runId, sessionId } = await world.engine.startRun({ input: 'report' });
    // Before the model's reply is recorded nothing was decided; after the commit, the verdict is recorded.
    for (const point of ['iteration.after_model_call', 'iteration.after_commit']) {
      const doomed = spawnWorker(world, point);
      const exit = await waitForExit(doomed as never, 60_000);
      expect(exit.signal, `worker should die at ${point}:\n${doomed.output()}`).toBe('SIGKILL');
    }
    expect(picksIn(log)).toHaveLength(1);
    const rescuer = spawnWorker(world);
    const run = await world.engine.waitForRun(runId, { timeoutMs: 60_000 });
    // The run finished with the second commit; the rescuer takes the step that worker left (its third
    // execution), and a SIGTERM lets it finish that step before it exits.
    await waitFor(
      async () => {
        const journal = await world.redis.hgetall(runKeys(world.engine.space, sessionId, runId).journal);
        return Object.entries(journal).some(
          ([field, text]) => field.startsWith('attempts:') && JSON.parse(text).count >= 3,
        );
      },
      60_000,
      'the rescuer to take the step',
    );
    rescuer.child.kill('SIGTERM');
    expect((await rescuer.exited).code, rescuer.output()).toBe(0);
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('contract_violated');
    // Decided once: one call in the rule's log, and the run holds that call's verdict.
    const picks = picksIn(log);
    expect(picks).toHaveLength(1);
    expect(run.contract?.errors).toEqual([{ field: 'summary', error_type: 'coin_rule', message: picks[0] }]);
    expect(run.contract?.rules).toEqual([{ kind: 'coin_rule', field: 'summary', valid: false }]);
    const ended = (await world.engine.readEvents(sessionId)).filter((event) => event.kind === 'agent_end');
    expect(ended).toHaveLength(1);
    expect(ended[0]?.data).toMatchObject({ metadata: { schema_version: '3', contract: { valid: false } } });
  }, 240_000);
});

describe("a run's contract", () => {
  it('is the one its definition recorded at its start, even on a worker whose config has a newer version', async () => {
    const world = new ExtensionWorld(configOf({ params: { log: '/dev/null' } }), {
      contractRules: testContractRules,
    });
    worlds.push(world);
    // Version 4 of the contract wants a field the agent does not give.
    const newer = configOf(
      { params: { log: '/dev/null' } },
      { schema_version: '4', schema: { required: { summary: 'string', owner: 'string' } } },
    );
    const written = JSON.parse(readFileSync(join(world.dir, 'ratchet.json'), 'utf8'));
    const newerPath = join(world.dir, 'ratchet-v4.json');
    writeFileSync(newerPath, JSON.stringify({ ...newer, redis: written.redis, worker: written.worker }));
    const loaded = loadConfig(newerPath, {
      extensions: { contractRules: testContractRules },
      knownToolboxes: knownToolboxes([testToolbox()]),
    });
    const newerEngine = engineFromConfig({
      config: loaded.config,
      redis: world.redis,
      logger: silentLogger(),
    });
    // Started under version 3 (the old engine records its definition), run by a worker of version 4.
    const { runId } = await world.engine.startRun({ input: 'report' });
    const { runId: newerRunId } = await newerEngine.startRun({ input: 'report' });
    const worker = new RatchetWorker({
      loaded,
      toolboxes: [testToolbox()],
      logger: silentLogger(),
      extensions: { contractRules: testContractRules },
    });
    cleanups.push(async () => {
      await worker.close(2000);
      await newerEngine.close();
    });
    await worker.start();
    const run = await world.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(run.contract).toMatchObject({ valid: true, schema_version: '3' });
    expect(run.schema_version).toBe('3');
    const newerRun = await world.engine.waitForRun(newerRunId, { timeoutMs: 30_000 });
    expect(newerRun.status).toBe('failed');
    expect(newerRun.contract).toMatchObject({ valid: false, schema_version: '4' });
    expect(newerRun.contract?.errors).toEqual([
      { field: 'owner', error_type: 'missing_field', message: 'the required field "owner" is missing' },
    ]);
  });
});
