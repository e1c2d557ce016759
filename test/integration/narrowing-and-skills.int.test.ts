import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { toolResultsOf } from '../../src/chat/index.js';
import { waitForExit } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function writeSkill(h: Harness, name: string, text: string): string {
  const folder = join(h.dir, '.ratchet/skills', name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'SKILL.md'), text);
  return join(folder, 'SKILL.md');
}

describe('a narrowed toolbox', () => {
  it('offers the model only the listed tools, and a call of another is an unknown tool', async () => {
    const h = new Harness({
      agent: { toolboxes: ['utils', { name: 'test', tools: ['add'] }] },
      script: {
        replies: [
          {
            tool_calls: [
              { id: 'add', name: 'add', arguments: { a: 1, b: 2 } },
              { id: 'echo', name: 'slow_echo', arguments: { text: 'hi', delay_ms: 0 } },
            ],
          },
          { text: 'done' },
        ],
      },
    });
    harness = h;
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'add and echo' });
    expect((await h.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');

    expect(h.modelCalls()[0]?.tools).toEqual([
      'calculate',
      'word_count',
      'add',
      'ask_user',
      'report_progress',
    ]);
    const results = (await h.transcript(sessionId)).flatMap((message) => toolResultsOf(message));
    expect(results.find((result) => result.tool_call_id === 'add')).toMatchObject({
      content: '{"sum":3}',
      is_error: false,
    });
    expect(results.find((result) => result.tool_call_id === 'echo')).toMatchObject({
      content: expect.stringContaining('unknown tool "slow_echo"'),
      is_error: true,
    });
  });
});

describe('skills', () => {
  it('load_skill returns a described skill, an undescribed one is in the system prompt, the filter holds', async () => {
    const h = new Harness({
      instructions: 'You are a test agent.',
      agent: { toolboxes: ['utils'], skills: ['deploy', 'style'] },
      script: {
        replies: [
          {
            tool_calls: [
              { id: 'load', name: 'load_skill', arguments: { name: 'deploy' } },
              { id: 'filtered', name: 'load_skill', arguments: { name: 'review' } },
            ],
          },
          { text: 'deployed' },
        ],
      },
    });
    harness = h;
    writeSkill(
      h,
      'deploy',
      '---\nname: deploy\ndescription: Ships a release\n---\n1. Build\n2. Push the tag\n',
    );
    writeSkill(h, 'review', '---\nname: review\ndescription: Reviews a change\n---\n1. Read the diff\n');
    writeSkill(h, 'style', '---\nname: style\n---\nUse short names.\n');
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'ship it' });
    expect((await h.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');

    const [call] = h.modelCalls();
    expect(call?.system).toBe('You are a test agent.\n\n## Skill: style\n\nUse short names.');
    expect(call?.tools).toEqual(['calculate', 'word_count', 'load_skill', 'ask_user', 'report_progress']);
    const results = (await h.transcript(sessionId)).flatMap((message) => toolResultsOf(message));
    expect(results.find((result) => result.tool_call_id === 'load')).toMatchObject({
      content: '1. Build\n2. Push the tag',
      is_error: false,
    });
    // `review` exists but this agent's filter leaves it out.
    expect(results.find((result) => result.tool_call_id === 'filtered')).toMatchObject({
      content: expect.stringContaining('invalid arguments for tool "load_skill"'),
      is_error: true,
    });
  });

  it('a worker does not start with a malformed SKILL.md, and says which file', async () => {
    const h = new Harness({ script: { replies: [{ text: 'never' }] } });
    harness = h;
    const file = writeSkill(h, 'broken', '---\nname: [broken\n---\nsteps\n');
    const worker = h.spawnWorker();
    const exit = await waitForExit(worker, 30_000);
    expect(exit.code, worker.output()).toBe(2);
    expect(worker.output()).toContain(`${file}: front-matter is not valid YAML`);
  });
});
