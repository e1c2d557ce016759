import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiHarness } from '../api/api-harness.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { callTool, connectClient, httpTransport } from './mcp-client.js';

// MCP send_event and signal_run (decision 0033) over the real SDK client and HTTP, tenant-scoped as the routes:
// a signal reaches the caller's own runs only, and an event (every tenant's runs) an operator's only.

let api: ApiHarness | undefined;
const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await api?.close();
  api = undefined;
});

const operator = 'operator-token';
const acme = 'acme-token';
const globex = 'globex-token';

async function connect(token: string): Promise<Client> {
  if (!api) throw new Error('no API');
  const client = await connectClient(httpTransport(api.url, token));
  clients.push(client);
  return client;
}

describe('MCP send_event and signal_run', () => {
  it("signal a tenant's own waiting run, then send the event it waits for next as an operator", async () => {
    api = await ApiHarness.start({
      script: {
        replies: [
          { tool_calls: [{ id: 'go', name: 'wait_for_event', arguments: { event: 'go', timeout_s: 120 } }] },
          {
            tool_calls: [
              { id: 'done', name: 'wait_for_event', arguments: { event: 'done', timeout_s: 120 } },
            ],
          },
          { text: 'all done' },
        ],
      },
      api: { tokens: [operator, { token: acme, tenant: 'acme' }, { token: globex, tenant: 'globex' }] },
      harness: { agent: { toolboxes: ['waits'] }, worker: { question_recheck_ms: 60_000 } },
    });
    const asAcme = await connect(acme);
    const asGlobex = await connect(globex);
    const asOperator = await connect(operator);
    const submitted = await callTool(asAcme, 'submit_task', { input: 'wait' });
    const runId: string = submitted.value.run_id;
    await waitFor(
      async () => (await api?.engine.getRun(runId))?.waiting?.[0]?.event === 'go',
      20_000,
      'the first wait',
    );

    // Another tenant's run does not exist for it; an unknown run neither.
    const foreign = await callTool(asGlobex, 'signal_run', { run_id: runId, event: 'go' });
    expect(foreign).toMatchObject({ isError: true });
    expect(foreign.text).toMatch(/^not_found: unknown run/);
    const bad = await callTool(asAcme, 'signal_run', { run_id: runId, event: '' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('event');

    const signalled = await callTool(asAcme, 'signal_run', {
      run_id: runId,
      event: 'go',
      payload: { n: 1 },
      id: 'go-1',
    });
    expect(signalled).toMatchObject({ isError: false, value: { id: 'go-1', duplicate: false, woken: 1 } });
    const again = await callTool(asAcme, 'signal_run', { run_id: runId, event: 'go', id: 'go-1' });
    expect(again.value).toMatchObject({ id: 'go-1', duplicate: true });
    await waitFor(
      async () => (await api?.engine.getRun(runId))?.waiting?.[0]?.event === 'done',
      20_000,
      'the second wait',
    );

    // An event reaches every tenant's waiting runs: a tenant's token is refused, naming the way out.
    const scoped = await callTool(asAcme, 'send_event', { event: 'done', payload: { ok: true } });
    expect(scoped.isError).toBe(true);
    expect(scoped.text).toMatch(/^forbidden: .*operator token/);
    const sent = await callTool(asOperator, 'send_event', {
      event: 'done',
      payload: { ok: true },
      id: 'd-1',
    });
    expect(sent).toMatchObject({
      isError: false,
      value: { id: 'd-1', duplicate: false, woken: 1, runs: [] },
    });
    const duplicate = await callTool(asOperator, 'send_event', { event: 'done', id: 'd-1' });
    expect(duplicate.value).toMatchObject({ id: 'd-1', duplicate: true });

    const finished = await callTool(asAcme, 'wait_run', { run_id: runId, timeout_s: 30 });
    expect(finished.value.run).toMatchObject({ status: 'completed', result: 'all done' });
    const calls = api.harness.modelCalls();
    expect(calls.at(-1)?.messages.some((message) => message.text.includes('"ok":true'))).toBe(true);
  });
});
