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

const add = (a: number, b: number) => ({ tool_calls: [{ name: 'add', arguments: { a, b } }] });

describe('MCP retry_run and fork_run', () => {
  it('retry a run failed on max_iterations and fork a run, as the HTTP routes do', async () => {
    api = await ApiHarness.start({
      script: { replies: [add(1, 1), add(2, 2), add(3, 3), { text: 'done' }] },
    });
    client = await connectClient(httpTransport(api.url));
    const submitted = await callTool(client, 'submit_task', { input: 'count', max_iterations: 2 });
    const runId: string = submitted.value.run_id;
    const failed = await callTool(client, 'wait_run', { run_id: runId, timeout_s: 30 });
    expect(failed.value.run).toMatchObject({ status: 'failed', error: { code: 'max_iterations' } });

    const above = await callTool(client, 'retry_run', { run_id: runId, max_iterations: 11 });
    expect(above.isError).toBe(true);
    expect(above.text).toContain('max_iterations');

    const retried = await callTool(client, 'retry_run', { run_id: runId, max_iterations: 5 });
    expect(retried.isError).toBe(false);
    expect(retried.value.session_id).toBe(submitted.value.session_id);
    const done = await callTool(client, 'wait_run', { run_id: retried.value.run_id, timeout_s: 30 });
    expect(done.value.run).toMatchObject({ status: 'completed', result: 'done', origin: { kind: 'retry' } });

    const again = await callTool(client, 'retry_run', { run_id: runId });
    expect(again.isError).toBe(true);
    expect(again.text).toContain(`retried already by ${retried.value.run_id}`);

    const beyond = await callTool(client, 'fork_run', { run_id: runId, at_iteration: 3 });
    expect(beyond.isError).toBe(true);
    expect(beyond.text).toContain('at_iteration');
    // The retry's first iteration was recorded by the run it continues: the fork names that one.
    const ofRetry = await callTool(client, 'fork_run', { run_id: retried.value.run_id, at_iteration: 1 });
    expect(ofRetry.isError).toBe(false);
    const ofRetryDone = await callTool(client, 'wait_run', { run_id: ofRetry.value.run_id, timeout_s: 30 });
    expect(ofRetryDone.value.run).toMatchObject({
      status: 'completed',
      origin: { run_id: runId, at_iteration: 1 },
    });
    const forked = await callTool(client, 'fork_run', { run_id: runId, at_iteration: 1, input: 'again' });
    expect(forked.isError).toBe(false);
    const forkDone = await callTool(client, 'wait_run', { run_id: forked.value.run_id, timeout_s: 30 });
    expect(forkDone.value.run).toMatchObject({
      status: 'completed',
      origin: { kind: 'fork', run_id: runId, at_iteration: 1 },
    });
  });
});
