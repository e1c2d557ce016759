import { afterEach, describe, expect, it } from 'vitest';
import { Harness, type HarnessAgent } from '../helpers/harness.js';

// Handoff contracts (`contracts:`): a child run whose result breaks the contract towards the agent that
// delegated to it ends failed (contract_violated), its record keeps the check, and the parent's tool result
// carries the errors ({field, error_type, message}) for its model to retry or report.
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const contracts = [
  {
    from_agent: 'researcher',
    to_agent: 'lead',
    schema: { required: { summary: 'string' }, rules: [{ field: 'summary', min_length: 5 }] },
  },
];

function lead(call: { name: string; arguments: Record<string, unknown> }): HarnessAgent {
  return {
    name: 'lead',
    script: {
      replies: [{ tool_calls: [call] }],
      rules: [{ when: { role: 'tool' }, reply: { text: 'reported' } }],
    },
  };
}
const researcher = (answer: string): HarnessAgent => ({
  name: 'researcher',
  script: { default: { text: answer } },
});

async function childRun(h: Harness, sessionId: string) {
  const started = (await h.events(sessionId)).find(
    (event) => event.kind === 'agent_start' && event.agent === 'researcher',
  );
  const child = started ? await h.engine.getRun(started.run_id) : undefined;
  if (!child) throw new Error('no child run');
  return child;
}

describe('handoff contracts', () => {
  it('a result that breaks its contract comes back as errors the parent can act on', async () => {
    harness = new Harness({
      agents: [
        lead({ name: 'delegate_to_agent', arguments: { agent: 'researcher', task: 'look' } }),
        researcher('it is fine'),
      ],
      config: { contracts },
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'research it' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('reported');
    const child = await childRun(harness, sessionId);
    expect(child.status).toBe('failed');
    expect(child.error?.code).toBe('contract_violated');
    expect(child.contract).toMatchObject({
      contract: 'researcher->lead',
      valid: false,
      errors: [{ field: '$', error_type: 'invalid_json' }],
    });
    const leadCalls = harness.modelCalls().filter((call) => call.agent === 'lead');
    const toolResult = JSON.stringify(leadCalls[1]?.messages);
    expect(toolResult).toContain('broke handoff contract \\"researcher->lead\\"');
    expect(toolResult).toContain('invalid_json');
    const ended = (await harness.events(sessionId)).find(
      (event) => event.kind === 'agent_end' && event.run_id === child.id,
    );
    expect(ended?.data).toMatchObject({ status: 'failed', metadata: { contract: { valid: false } } });
  });

  it('a result that keeps its contract reaches the parent, with the check in its metadata', async () => {
    harness = new Harness({
      agents: [
        lead({ name: 'spawn_agents', arguments: { tasks: [{ agent: 'researcher', task: 'look' }] } }),
        researcher('{"summary": "all good here", "confidence": 0.9}'),
      ],
      config: { contracts },
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'research it' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    const child = await childRun(harness, sessionId);
    expect(child.status).toBe('completed');
    expect(child.confidence).toBe(0.9);
    expect(child.contract).toEqual({
      contract: 'researcher->lead',
      valid: true,
      errors: [],
      warnings: [],
      schema_version: null,
    });
    const spawnResult = (await harness.transcript(sessionId)).find((message) => message.role === 'tool');
    const part = spawnResult?.parts[0];
    const results = JSON.parse(part?.type === 'tool_result' ? part.content : '[]');
    expect(results[0].metadata).toMatchObject({
      confidence: 0.9,
      partial: null,
      contract: { contract: 'researcher->lead', valid: true },
    });
  });

  it("a session's own run is held to the contract without to_agent", async () => {
    harness = new Harness({
      agents: [researcher('{"summary": "no"}')],
      config: {
        contracts: [{ name: 'final-report', from_agent: 'researcher', ...contracts[0], to_agent: undefined }],
      },
    });
    await harness.startWorker();
    const { runId } = await harness.engine.startRun({ input: 'research it' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('contract_violated');
    expect(run.contract?.errors).toEqual([
      { field: 'summary', error_type: 'min_length', message: 'length 2 is below the minimum of 5' },
    ]);
  });
});
