import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from '../../src/chat/index.js';
import { runKeys } from '../../src/redis/keys.js';
import { Harness, type HarnessAgent, type HarnessOptions } from '../helpers/harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function runTeam(
  agents: HarnessAgent[],
  teams: unknown[],
  team: string,
  options: Partial<HarnessOptions> = {},
) {
  harness = new Harness({ agents, ...options, config: { teams, ...options.config } });
  await harness.startWorker();
  const { runId, sessionId } = await harness.engine.startRun({ input: 'write about owls', agent: team });
  const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
  return { h: harness, run, runId, sessionId, shared: await harness.transcript(sessionId) };
}

const says = (message: Message) => [message.sender, message.role, text(message)];
const text = (message: Message) =>
  message.parts.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('');

async function childRuns(h: Harness, sessionId: string, runId: string) {
  const ids = await h.redis.smembers(runKeys(h.engine.space, sessionId, runId).children);
  return (await Promise.all(ids.map((id) => h.engine.getRun(id)))).flatMap((run) => (run ? [run] : []));
}

const researcher: HarnessAgent = {
  name: 'researcher',
  script: {
    rules: [{ when: { role: 'tool' }, reply: { text: 'facts: owls hunt at night' } }],
    replies: [{ tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }],
  },
};
const writer: HarnessAgent = {
  name: 'writer',
  script: {
    rules: [{ when: { role: 'user', contains: 'facts' }, reply: { text: 'article: owls are nocturnal' } }],
  },
};

describe('reactor teams', () => {
  it('sequence: each member once; members see the others as user messages; only final answers are shared', async () => {
    const { h, run, runId, sessionId, shared } = await runTeam(
      [researcher, writer],
      [
        {
          name: 'pipeline',
          members: [
            { agent: 'researcher', role: 'research' },
            { agent: 'writer', role: 'write' },
          ],
          coordinator: { kind: 'sequence' },
        },
      ],
      'pipeline',
    );
    expect(run.status).toBe('completed');
    expect(run.result).toBe('article: owls are nocturnal');
    expect(shared.map(says)).toEqual([
      ['user', 'user', 'write about owls'],
      ['researcher', 'assistant', 'facts: owls hunt at night'],
      ['writer', 'assistant', 'article: owls are nocturnal'],
    ]);
    const members = await childRuns(h, sessionId, runId);
    const researcherRun = members.find((member) => member.agent === 'researcher');
    const writerRun = members.find((member) => member.agent === 'writer');
    // The researcher's tool call stayed in its private chat.
    const privateChat = await h.engine.readChat(sessionId, { chatId: researcherRun?.chat_id ?? '' });
    expect(privateChat.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    // The writer was synced: the input and the researcher's answer, re-roled as user, keeping the sender.
    const writerChat = await h.engine.readChat(sessionId, { chatId: writerRun?.chat_id ?? '' });
    expect(writerChat.map(says)).toEqual([
      ['user', 'user', 'write about owls'],
      ['researcher', 'user', 'facts: owls hunt at night'],
      ['writer', 'assistant', 'article: owls are nocturnal'],
    ]);
    expect(writerChat[1]?.metadata).toEqual(shared[1]?.metadata);
    expect(writerRun?.parent?.run_id).toBe(runId);
  });

  it('loop: round robin until max_rounds, then fails with a max-rounds error', async () => {
    const { run, shared } = await runTeam(
      [
        { name: 'ping', script: { default: { text: 'ping' } } },
        { name: 'pong', script: { default: { text: 'pong' } } },
      ],
      [
        {
          name: 'pingpong',
          members: [{ agent: 'ping' }, { agent: 'pong' }],
          coordinator: { kind: 'loop', max_rounds: 2 },
        },
      ],
      'pingpong',
    );
    expect(run.status).toBe('failed');
    expect(run.error).toEqual({
      code: 'max_rounds',
      message: 'team "pingpong" reached max_rounds (2) without finishing',
    });
    expect(shared.slice(1).map(text)).toEqual(['ping', 'pong', 'ping', 'pong']);
  });

  it("loop with max_rounds 0 (no round limit): the team's options.timeout_s ends the run, members included", async () => {
    const started = Date.now();
    const { h, run, runId, sessionId, shared } = await runTeam(
      [
        { name: 'ping', script: { default: { text: 'ping', delay_ms: 20 } } },
        { name: 'pong', script: { default: { text: 'pong', delay_ms: 20 } } },
      ],
      [
        {
          name: 'forever',
          members: [{ agent: 'ping' }, { agent: 'pong' }],
          coordinator: { kind: 'loop', max_rounds: 0 },
          options: { timeout_s: 8 },
        },
      ],
      'forever',
    );
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('deadline_exceeded');
    expect(run.deadline_at).not.toBeNull();
    // Past the 3 rounds the default allows: only the deadline stopped it.
    expect(shared.length).toBeGreaterThan(7);
    expect(Date.now() - started).toBeLessThan(40_000);
    // Each member's run had the team's deadline, and none is left running.
    const members = await childRuns(h, sessionId, runId);
    expect(members.every((member) => member.deadline_at === run.deadline_at)).toBe(true);
    expect(members.every((member) => ['completed', 'failed', 'cancelled'].includes(member.status))).toBe(
      true,
    );
  });

  it("loop with max_rounds 0 and a team budget: the members share the team's run budget, which ends the run", async () => {
    const { h, run, runId, sessionId, shared } = await runTeam(
      [
        { name: 'ping', script: { default: { text: 'ping' } } },
        { name: 'pong', script: { default: { text: 'pong' } } },
      ],
      [
        {
          name: 'forever',
          members: [{ agent: 'ping' }, { agent: 'pong' }],
          coordinator: { kind: 'loop', max_rounds: 0 },
          budget: { tokens: 15000 },
        },
      ],
      'forever',
    );
    // The member whose next request would go over the shared budget failed, and with it the team's run.
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('member_failed');
    expect(run.error?.message).toContain('budget exceeded');
    // The team's run kept its team's budget; its members' runs shared it with their usage summed on it.
    expect(run.budget).toEqual({ tokens: 15000 });
    expect(run.deadline_at).toBeNull();
    const members = await childRuns(h, sessionId, runId);
    // Past the 3 rounds the default allows (a request costs about 1,500 tokens): only the budget stopped it.
    expect(shared.length).toBeGreaterThan(7);
    expect(members.every((member) => member.budget?.tokens === 15000)).toBe(true);
    expect(members.some((member) => member.error?.code === 'budget_exceeded')).toBe(true);
    expect(members.every((member) => ['completed', 'failed', 'cancelled'].includes(member.status))).toBe(
      true,
    );
    // A run may ask for less than its team's budget, never more.
    await expect(
      h.engine.startRun({ input: 'again', agent: 'forever', budget: { tokens: 15001 } }),
    ).rejects.toThrow('budget.tokens: 15001 is more than team "forever" allows (budget.tokens: 15000)');
  });

  it('round_robin_until: stops once the last shared message contains the text', async () => {
    const { run, shared } = await runTeam(
      [
        { name: 'author', script: { replies: [{ text: 'draft 1' }, { text: 'draft 2' }] } },
        { name: 'critic', script: { replies: [{ text: 'needs work' }, { text: 'APPROVED' }] } },
      ],
      [
        {
          name: 'review',
          members: [{ agent: 'author' }, { agent: 'critic' }],
          coordinator: { kind: 'round_robin_until', until: { contains: 'APPROVED' }, max_rounds: 5 },
        },
      ],
      'review',
    );
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    expect(run.result).toBe('APPROVED');
    expect(shared.slice(1).map(text)).toEqual(['draft 1', 'needs work', 'draft 2', 'APPROVED']);
  });

  it('round_robin_until: stops once a key exists in the session state', async () => {
    const { run, shared } = await runTeam(
      [
        { name: 'worker', script: { default: { text: 'working' } } },
        {
          name: 'checker',
          toolboxes: ['state'],
          script: {
            // The checker sets the key on its second turn (its private chat then holds one earlier reply).
            rules: [{ when: { role: 'tool' }, reply: { text: 'marked done' } }],
            replies: [
              { text: 'not yet' },
              { tool_calls: [{ name: 'state_set', arguments: { key: 'done', value: true } }] },
            ],
          },
        },
      ],
      [
        {
          name: 'shift',
          members: [{ agent: 'worker' }, { agent: 'checker' }],
          coordinator: { kind: 'round_robin_until', until: { state_key: 'done' }, max_rounds: 5 },
        },
      ],
      'shift',
    );
    expect(run.status).toBe('completed');
    expect(shared.slice(1).map(text)).toEqual(['working', 'not yet', 'working', 'marked done']);
  });

  it('round_robin_until: stops once a state key holds a given value (state_equals)', async () => {
    const { run, shared } = await runTeam(
      [
        { name: 'worker', script: { default: { text: 'working' } } },
        {
          name: 'checker',
          toolboxes: ['state'],
          script: {
            // First "draft" (the team goes on), then "approved" with keys in another order (it stops). Its
            // second turn's private chat holds the first turn's two replies: position 2.
            rules: [{ when: { role: 'tool' }, reply: { text: 'status set' } }],
            replies: [
              {
                tool_calls: [
                  { name: 'state_set', arguments: { key: 'review', value: { status: 'draft', n: 1 } } },
                ],
              },
              { text: 'not used: position 1 is the rule reply' },
              {
                tool_calls: [
                  { name: 'state_set', arguments: { key: 'review', value: { n: 2, status: 'approved' } } },
                ],
              },
            ],
          },
        },
      ],
      [
        {
          name: 'review',
          members: [{ agent: 'worker' }, { agent: 'checker' }],
          coordinator: {
            kind: 'round_robin_until',
            until: { state_equals: { key: 'review', value: { status: 'approved', n: 2 } } },
            max_rounds: 5,
          },
        },
      ],
      'review',
    );
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    expect(shared.slice(1).map(text)).toEqual(['working', 'status set', 'working', 'status set']);
  });

  it('takes a handoff group as a member, and a handoff group as a delegation target', async () => {
    const { h, run, runId, sessionId, shared } = await runTeam(
      [
        {
          name: 'front',
          script: {
            rules: [
              {
                when: { role: 'user' },
                reply: { tool_calls: [{ name: 'transfer_to_back', arguments: {} }] },
              },
            ],
          },
        },
        {
          name: 'back',
          script: { rules: [{ when: { role: 'tool' }, reply: { text: 'back office answer' } }] },
        },
        {
          name: 'boss',
          script: {
            rules: [{ when: { role: 'tool' }, reply: { text: 'boss saw: back office answer' } }],
            replies: [
              {
                tool_calls: [{ name: 'delegate_to_agent', arguments: { agent: 'desk', task: 'handle it' } }],
              },
            ],
          },
        },
      ],
      [
        {
          name: 'office',
          members: [{ agent: 'desk' }, { agent: 'boss' }],
          coordinator: { kind: 'sequence' },
        },
      ],
      'office',
      { config: { handoffs: [{ name: 'desk', members: ['front', 'back'] }] } },
    );
    expect(run.status).toBe('completed');
    expect(shared.slice(1).map(says)).toEqual([
      ['desk', 'assistant', 'back office answer'],
      ['boss', 'assistant', 'boss saw: back office answer'],
    ]);
    const boss = (await childRuns(h, sessionId, runId)).find((member) => member.agent === 'boss');
    const [delegated] = await childRuns(h, sessionId, boss?.id ?? '');
    expect(delegated).toMatchObject({ agent: 'desk', status: 'completed', result: 'back office answer' });
  });

  it('role_round_robin: members of a role act at once; answers keep the selection order', async () => {
    const { h, run, runId, sessionId, shared } = await runTeam(
      [
        { name: 'slow', script: { default: { text: 'slow finding', delay_ms: 600 } } },
        { name: 'quick', script: { default: { text: 'quick finding' } } },
        { name: 'summarizer', script: { default: { text: 'summary' } } },
      ],
      [
        {
          name: 'study',
          members: [
            { agent: 'slow', role: 'research' },
            { agent: 'quick', role: 'research' },
            { agent: 'summarizer', role: 'write' },
          ],
          coordinator: { kind: 'role_round_robin', max_rounds: 1 },
        },
      ],
      'study',
    );
    expect(run.status).toBe('completed');
    expect(shared.slice(1).map(says)).toEqual([
      ['slow', 'assistant', 'slow finding'],
      ['quick', 'assistant', 'quick finding'],
      ['summarizer', 'assistant', 'summary'],
    ]);
    // The two researchers ran at once: the quick one finished while the slow one was still working.
    const members = await childRuns(h, sessionId, runId);
    const slow = members.find((member) => member.agent === 'slow');
    const quick = members.find((member) => member.agent === 'quick');
    expect(Date.parse(quick?.finished_at ?? '')).toBeLessThan(Date.parse(slow?.finished_at ?? ''));
  });

  it('role_round_robin: a member that fails while others of its role run cancels them, as a spawn does', async () => {
    const started = Date.now();
    const { h, run, runId, sessionId } = await runTeam(
      [
        { name: 'slow_a', script: { default: { text: 'never finished', delay_ms: 30_000 } } },
        {
          name: 'failing',
          script: {
            default: { text: 'unreachable', delay_ms: 300, fail: [{ kind: 'auth', message: 'bad key' }] },
          },
        },
        { name: 'slow_b', script: { default: { text: 'never finished', delay_ms: 30_000 } } },
        { name: 'writer', script: { default: { text: 'summary' } } },
      ],
      [
        {
          name: 'study',
          members: [
            { agent: 'slow_a', role: 'research' },
            { agent: 'failing', role: 'research' },
            { agent: 'slow_b', role: 'research' },
            { agent: 'writer', role: 'write' },
          ],
          coordinator: { kind: 'role_round_robin', max_rounds: 1 },
        },
      ],
      'study',
    );
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('member_failed');
    const members = await childRuns(h, sessionId, runId);
    const failing = members.find((member) => member.agent === 'failing');
    expect(failing?.status).toBe('failed');
    // The others of its role were cancelled, naming the failed run; the next role never acted.
    for (const agent of ['slow_a', 'slow_b']) {
      const member = members.find((candidate) => candidate.agent === agent);
      expect(member?.status, agent).toBe('cancelled');
      expect(member?.error?.message, agent).toContain(`child run ${failing?.id} (failing) failed`);
    }
    expect(members.map((member) => member.agent)).not.toContain('writer');
    // Their 30 s model calls were aborted, not waited for.
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('llm: a model picks the members as JSON, with one retry on an invalid answer', async () => {
    const { h, run, shared } = await runTeam(
      [
        { name: 'alpha', script: { default: { text: 'alpha speaks' } } },
        { name: 'beta', script: { default: { text: 'beta concludes' } } },
        {
          name: 'boss',
          script: {
            rules: [
              {
                when: { contains: 'could not be used' },
                reply: { text: '{"members": ["alpha"], "done": false}' },
              },
              {
                when: { contains: '[beta]' },
                reply: { text: '```json\n{"members": [], "done": true}\n```' },
              },
              { when: { contains: '[alpha]' }, reply: { text: '{"members": ["beta"], "done": false}' } },
            ],
            default: { text: 'let me think... alpha?', usage: { input_tokens: 50, output_tokens: 5 } },
          },
        },
      ],
      [
        {
          name: 'board',
          members: [{ agent: 'alpha' }, { agent: 'beta' }],
          coordinator: { kind: 'llm', provider: 'model-boss', instructions: 'Pick wisely.' },
        },
      ],
      'board',
    );
    expect(run.status).toBe('completed');
    expect(run.result).toBe('beta concludes');
    expect(shared.slice(1).map(text)).toEqual(['alpha speaks', 'beta concludes']);
    // Four coordinator requests (an invalid one and its retry, then two valid ones), counted on the team run.
    const coordinatorCalls = h
      .modelCalls()
      .filter((call) => (call as unknown as { agent: string }).agent === 'board-coordinator');
    expect(coordinatorCalls.length).toBe(4);
    expect(run.usage.requests).toBe(4);
  });

  it('llm: a second invalid answer fails the team clearly', async () => {
    const { run } = await runTeam(
      [
        { name: 'alpha', script: { default: { text: 'alpha speaks' } } },
        { name: 'boss', script: { default: { text: '{"members": ["gamma"], "done": false}' } } },
      ],
      [
        {
          name: 'board',
          members: [{ agent: 'alpha' }],
          coordinator: { kind: 'llm', provider: 'model-boss' },
        },
      ],
      'board',
    );
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('coordinator_invalid');
    expect(run.error?.message).toBe(
      'the coordinator of team "board" did not answer with valid JSON twice: "gamma" is not a member (members: alpha)',
    );
  });

  it('nests: a team is a member of another team and a delegation target', async () => {
    const { h, run, runId, sessionId, shared } = await runTeam(
      [
        researcher,
        writer,
        {
          name: 'lead',
          script: {
            rules: [{ when: { role: 'tool' }, reply: { text: 'lead: published' } }],
            replies: [
              {
                tool_calls: [
                  { name: 'delegate_to_agent', arguments: { agent: 'pipeline', task: 'owls please' } },
                ],
              },
            ],
          },
        },
        { name: 'editor', script: { default: { text: 'edited' } } },
      ],
      [
        {
          name: 'pipeline',
          members: [{ agent: 'researcher' }, { agent: 'writer' }],
          coordinator: { kind: 'sequence' },
        },
        {
          name: 'newsroom',
          members: [{ agent: 'pipeline' }, { agent: 'editor' }, { agent: 'lead' }],
          coordinator: { kind: 'sequence' },
        },
      ],
      'newsroom',
    );
    expect(run.status).toBe('completed');
    expect(shared.slice(1).map(says)).toEqual([
      ['pipeline', 'assistant', 'article: owls are nocturnal'],
      ['editor', 'assistant', 'edited'],
      ['lead', 'assistant', 'lead: published'],
    ]);
    const members = await childRuns(h, sessionId, runId);
    const lead = members.find((member) => member.agent === 'lead');
    const [delegated] = await childRuns(h, sessionId, lead?.id ?? '');
    expect(delegated).toMatchObject({
      agent: 'pipeline',
      status: 'completed',
      result: 'article: owls are nocturnal',
    });
  });
});
