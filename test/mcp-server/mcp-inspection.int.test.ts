import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiHarness } from '../api/api-harness.js';
import { callTool, connectClient, httpTransport } from './mcp-client.js';

let api: ApiHarness | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  await api?.close();
  api = undefined;
});

describe('MCP get_run_steps and get_run_tree', () => {
  it("give a finished run's timeline and tree, as the HTTP API does", async () => {
    api = await ApiHarness.start({
      script: {
        replies: [
          { text: 'adding', tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
          { text: '5' },
        ],
      },
    });
    client = await connectClient(httpTransport(api.url));
    const submitted = await callTool(client, 'submit_task', { input: 'add 2 and 3' });
    const runId: string = submitted.value.run_id;
    await callTool(client, 'wait_run', { run_id: runId, timeout_s: 30 });

    const steps = await callTool(client, 'get_run_steps', { run_id: runId, cut_at: 100 });
    expect(steps.isError).toBe(false);
    const http = await api.request('GET', `/v1/runs/${runId}/steps?cut_at=100`);
    expect(steps.value).toEqual(http.body);
    expect(steps.value.steps.map((step: { decision: string }) => step.decision)).toEqual(['tools', 'final']);
    expect(steps.value.steps[0].tool_calls[0]).toMatchObject({ name: 'add', ledger: 'done' });
    expect(steps.value.steps[0].attempts[0]).toMatchObject({ cause: 'first', attempt: 1 });

    const tree = await callTool(client, 'get_run_tree', { run_id: runId });
    expect(tree.value).toEqual((await api.request('GET', `/v1/runs/${runId}/tree`)).body);
    expect(tree.value.runs).toHaveLength(1);

    const unknown = await callTool(client, 'get_run_steps', { run_id: 'run_0000000000000000_0000000000' });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain('unknown run');
  });
});
