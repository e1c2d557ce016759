import { writeFileSync } from 'node:fs';
import { type LoadedConfig, loadConfig } from '../../src/config/index.js';
import { runKeys } from '../../src/redis/keys.js';
import type { TestEngine } from '../../src/testing/index.js';
import { testConfig } from '../../src/testing/test-engine.js';
import { waitFor } from './crash-scenario.js';

/**
 * A deploy in a test (decision 0030): rewrites the test engine's config file, which the workers it spawns
 * next load, and gives the new config as loaded (for an API restarted on it).
 */
export function deployConfig(engine: TestEngine, next: Record<string, unknown>): LoadedConfig {
  const place = {
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    prefix: engine.prefix,
    callsLog: engine.loaded.config.providers[0]?.record_calls as string,
  };
  writeFileSync(engine.loaded.path, JSON.stringify(testConfig({ config: next }, place), null, 2));
  return loadConfig(engine.loaded.path);
}

/** Starts a run of the agent and waits until it asks its question; gives the question's id. */
export async function parkedOnQuestion(engine: TestEngine, agent?: string) {
  const { runId, sessionId } = await engine.start({ input: 'pick a colour', ...(agent ? { agent } : {}) });
  let questionId = '';
  await waitFor(
    async () => {
      const run = await engine.engine.getRun(runId);
      questionId = run?.pending_question?.id ?? '';
      return questionId !== '';
    },
    20_000,
    'the run to ask its question',
  );
  return { runId, sessionId, questionId };
}

/** Waits until the first child run of a run (a delegation's child, a team's member) asks its question. */
export async function childParkedOnQuestion(
  engine: TestEngine,
  parent: { sessionId: string; runId: string },
): Promise<{ child: string; questionId: string }> {
  let child = '';
  let questionId = '';
  await waitFor(
    async () => {
      const children = runKeys(engine.engine.space, parent.sessionId, parent.runId).children;
      child = (await engine.redis.smembers(children))[0] ?? '';
      questionId = child ? ((await engine.engine.getRun(child))?.pending_question?.id ?? '') : '';
      return questionId !== '';
    },
    60_000,
    'the child run to ask its question',
  );
  return { child, questionId };
}

/** The system prompts the scripted model was sent for a run, by iteration. */
export function systemPrompts(engine: TestEngine, runId: string): { iteration: number; system: string }[] {
  return engine
    .modelCalls()
    .filter((call) => call.run_id === runId)
    .map((call) => ({ iteration: call.iteration, system: (call as unknown as { system: string }).system }));
}
