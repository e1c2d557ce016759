import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiHarness } from '../api/api-harness.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { callTool, connectClient, httpTransport } from './mcp-client.js';

let api: ApiHarness | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  await api?.close();
  api = undefined;
});

describe('MCP list_runs and list_sessions', () => {
  it('find runs and sessions by status, agent and session, page by cursor, and answer as the HTTP API does', async () => {
    api = await ApiHarness.start({
      script: {
        rules: [
          { when: { role: 'user', contains: 'fail' }, reply: { text: 'never', fail: [{ kind: 'auth' }] } },
          {
            when: { role: 'user', contains: 'question' },
            reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which?' } }] },
          },
        ],
        default: { text: 'done' },
      },
    });
    const harness = api;
    client = await connectClient(httpTransport(harness.url));
    const mcp = client;
    const started: { run_id: string; session_id: string }[] = [];
    for (const input of ['hello', 'fail now', 'a question', 'hello again']) {
      started.push((await callTool(mcp, 'submit_task', { input })).value);
    }
    const [hello, failing, asking] = started;
    if (!hello || !failing || !asking) throw new Error('not started');
    await waitFor(
      async () => {
        const failed = await callTool(mcp, 'list_runs', { status: ['failed', 'waiting_input'] });
        return failed.value.runs.length === 2;
      },
      20_000,
      'a failed and a waiting run',
    );

    const failed = await callTool(mcp, 'list_runs', { status: ['failed'] });
    expect(failed.isError).toBe(false);
    expect(failed.value.runs.map((run: { id: string }) => run.id)).toEqual([failing.run_id]);
    expect(failed.value).toEqual((await harness.request('GET', '/v1/runs?status=failed')).body);
    const waiting = await callTool(mcp, 'list_runs', { status: ['waiting_input'], root: true });
    expect(waiting.value.runs).toEqual([
      expect.objectContaining({ id: asking.run_id, status: 'waiting_input', agent: 'agent' }),
    ]);
    const ofSession = await callTool(mcp, 'list_runs', { session_id: hello.session_id });
    expect(ofSession.value.runs.map((run: { id: string }) => run.id)).toEqual([hello.run_id]);

    // Two pages of two, in the HTTP API's order.
    const first = await callTool(mcp, 'list_runs', { limit: 2 });
    const second = await callTool(mcp, 'list_runs', { limit: 2, cursor: first.value.next_cursor });
    const all = (await harness.request('GET', '/v1/runs')).body.runs.map((run: { id: string }) => run.id);
    expect([...first.value.runs, ...second.value.runs].map((run: { id: string }) => run.id)).toEqual(all);
    expect(all).toHaveLength(4);

    const active = await callTool(mcp, 'list_sessions', { status: 'active' });
    expect(active.value.sessions.map((session: { id: string }) => session.id)).toEqual([asking.session_id]);
    expect((await callTool(mcp, 'list_sessions', {})).value.sessions).toHaveLength(4);

    // Bad arguments are a tool error naming the field, not a crash.
    const tooMany = await callTool(mcp, 'list_runs', { limit: 501 });
    expect(tooMany.isError).toBe(true);
    expect(tooMany.text).toContain('limit');
    const badCursor = await callTool(mcp, 'list_runs', { cursor: 'nonsense' });
    expect(badCursor.isError).toBe(true);
    expect(badCursor.text).toContain('cursor');
  });
});
