import type { Browser, Response } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { describeWithBrowser, launchBrowser } from '../helpers/browser.js';
import { html, type PageServer, startPageServer } from '../helpers/browser-pages.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { ApiHarness } from './api-harness.js';
import { rawRequest, rawSocketRequest } from './raw-http.js';

// Cross-site requests to a local Ratchet (issue 31, point 10): a page served on another port of localhost
// (another origin of the same site) tries to cancel a waiting run, retry a failed one, create sessions and
// start a run, with requests a browser sends without asking the server first (form posts of every
// encoding, `no-cors` fetches with text/plain or no body, a beacon) and with ones it must ask first (JSON,
// DELETE). The API refuses each by its Origin, and every request that changes something must say
// `content-type: application/json`, which no page of another origin can send without a CORS preflight the
// API never grants. Nothing changes.

const user = 'user' as const;
const script: Script = {
  rules: [
    {
      when: { role: user, contains: 'ask' },
      reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
    },
    { when: { role: user, contains: 'fail' }, reply: { text: 'never seen', fail: [{ kind: 'auth' }] } },
  ],
  default: { text: 'done' },
};

interface Targets {
  /** A run waiting for an answer: cancellable. */
  waiting: { runId: string; sessionId: string };
  /** A failed run: retryable. */
  failed: { runId: string; sessionId: string };
}

async function startTargets(api: ApiHarness): Promise<Targets> {
  const waiting = await api.submitRun('ask me something');
  await api.pendingQuestion(waiting.runId);
  const failed = await api.submitRun('fail at once');
  await api.untilRunStatus(failed.runId, 'failed');
  return { waiting, failed };
}

/** What the attacks could have changed: the two runs, the sessions, and whether a run "pwned" exists. */
async function stateOf(api: ApiHarness, targets: Targets) {
  const waiting = (await api.request('GET', `/v1/runs/${targets.waiting.runId}`)).body;
  const failed = (await api.request('GET', `/v1/runs/${targets.failed.runId}`)).body;
  const sessions = (await api.request('GET', '/v1/sessions?limit=100')).body.sessions;
  const runs = (await api.request('GET', '/v1/runs?limit=100')).body.runs;
  return {
    waiting: { status: waiting.status, question: waiting.pending_question?.id ?? null },
    failed: { status: failed.status, retried_by: failed.retried_by },
    sessions: sessions.map((session: { id: string }) => session.id).sort(),
    runs: runs.map((run: { id: string }) => run.id).sort(),
  };
}

/**
 * The hostile page: each attack in turn, then `window.attacksDone`. Forms post into frames of their own
 * (a navigation of the page would end its script); fetches and the beacon report how they ended.
 */
function attackPage(apiOrigin: string, targets: Targets): string {
  const cancel = `${apiOrigin}/v1/runs/${targets.waiting.runId}/cancel`;
  const retry = `${apiOrigin}/v1/runs/${targets.failed.runId}/retry`;
  const sessions = `${apiOrigin}/v1/sessions`;
  const runs = `${apiOrigin}/v1/runs`;
  const session = `${apiOrigin}/v1/sessions/${targets.waiting.sessionId}`;
  return `<!doctype html><title>innocent</title>
<iframe name="f1"></iframe><iframe name="f2"></iframe><iframe name="f3"></iframe><iframe name="f4"></iframe>
<iframe name="f5"></iframe>
<form id="cancel-form" action="${cancel}" method="post" target="f1"></form>
<form id="retry-form" action="${retry}" method="post" enctype="text/plain" target="f2"></form>
<form id="run-form" action="${runs}" method="post" enctype="text/plain" target="f3">
  <input name='{"input":"pwned by a form","x":"' value='"}'>
</form>
<form id="session-form" action="${sessions}" method="post" enctype="multipart/form-data" target="f4">
  <input name="agent" value="agent">
</form>
<form id="cancel-urlencoded" action="${cancel}" method="post" target="f5">
  <input name="reason" value="pwned">
</form>
<script>
window.attacksDone = false;
window.outcomes = [];
async function attempt(label, action) {
  try { await action(); window.outcomes.push(label + ': sent'); }
  catch (error) { window.outcomes.push(label + ': ' + error.name); }
}
function post(formId, frame) {
  return new Promise((resolve) => {
    document.querySelector('iframe[name=' + frame + ']').addEventListener('load', resolve, { once: true });
    setTimeout(resolve, 5000);
    document.getElementById(formId).submit();
  });
}
(async () => {
  const noCors = (url, init) => fetch(url, { method: 'POST', mode: 'no-cors', ...init });
  await attempt('cancel, no-cors, no body', () => noCors(${JSON.stringify(cancel)}));
  await attempt('cancel, no-cors, text/plain', () =>
    noCors(${JSON.stringify(cancel)}, { headers: { 'content-type': 'text/plain' }, body: '{}' }));
  await attempt('retry, no-cors, no body', () => noCors(${JSON.stringify(retry)}));
  await attempt('session, no-cors, no body', () => noCors(${JSON.stringify(sessions)}));
  await attempt('run, no-cors, JSON as text/plain', () =>
    noCors(${JSON.stringify(runs)}, { headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ input: 'pwned by fetch' }) }));
  await attempt('cancel, cors, JSON', () => fetch(${JSON.stringify(cancel)}, { method: 'POST',
    headers: { 'content-type': 'application/json' }, body: '{}' }));
  await attempt('delete session, cors', () => fetch(${JSON.stringify(session)}, { method: 'DELETE' }));
  await attempt('cancel, beacon', async () => {
    if (!navigator.sendBeacon(${JSON.stringify(cancel)}, '{}')) throw new Error('not queued');
  });
  await post('cancel-form', 'f1');
  await post('retry-form', 'f2');
  await post('run-form', 'f3');
  await post('session-form', 'f4');
  await post('cancel-urlencoded', 'f5');
  window.attacksDone = true;
})();
</script>`;
}

describeWithBrowser('cross-site requests from another local origin, in Chromium', () => {
  let api: ApiHarness;
  let browser: Browser;
  let pages: PageServer;
  let page = '';

  beforeAll(async () => {
    api = await ApiHarness.start({ script });
    browser = await launchBrowser();
    pages = await startPageServer((_request, response) => html(response, page));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await pages?.close();
    await api?.close();
  });

  it('a page on another port of localhost cancels, retries and creates nothing', async () => {
    const targets = await startTargets(api);
    const before = await stateOf(api, targets);
    expect(before.waiting.status).not.toBe('cancelled');
    expect(before.waiting.question).not.toBeNull();
    expect(before.failed).toEqual({ status: 'failed', retried_by: null });

    const apiPort = new URL(api.url).port;
    // The same site (localhost), another origin (its own port): what `ratchet dev` next to any local dev
    // server faces.
    const apiOrigin = `http://localhost:${apiPort}`;
    page = attackPage(apiOrigin, targets);
    const context = await browser.newContext();
    try {
      const attacker = await context.newPage();
      const answered: string[] = [];
      attacker.on('response', (response: Response) => {
        const url = new URL(response.url());
        if (url.port !== apiPort) return;
        answered.push(`${response.request().method()} ${url.pathname} ${response.status()}`);
      });
      await attacker.goto(`http://localhost:${pages.port}/attack`);
      await attacker.waitForFunction('window.attacksDone === true', undefined, { timeout: 60_000 });
      // Each request that reached the API was refused by its Origin (403); none was answered with success.
      const expectedRefusals = [
        `POST /v1/runs/${targets.waiting.runId}/cancel 403`,
        `POST /v1/runs/${targets.failed.runId}/retry 403`,
        'POST /v1/sessions 403',
        'POST /v1/runs 403',
      ];
      await waitFor(
        async () => expectedRefusals.every((line) => answered.includes(line)),
        10_000,
        `the refusals of ${JSON.stringify(expectedRefusals)} among ${JSON.stringify(answered)}`,
      );
      expect(answered.filter((line) => !/ 40[34]$/.test(line))).toEqual([]);
      const outcomes = (await attacker.evaluate('window.outcomes')) as string[];
      // The requests the browser must ask about first never left it: the API grants no preflight.
      expect(outcomes).toContain('cancel, cors, JSON: TypeError');
      expect(outcomes).toContain('delete session, cors: TypeError');
    } finally {
      await context.close();
    }
    expect(await stateOf(api, targets)).toEqual(before);
  }, 120_000);
});

describe('requests that change something must say content-type: application/json (raw HTTP)', () => {
  let api: ApiHarness | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it('refuses POST and DELETE without it, or with a form or text type, with 415; nothing happens', async () => {
    api = await ApiHarness.start({ script });
    const targets = await startTargets(api);
    const before = await stateOf(api, targets);
    const cancel = `/v1/runs/${targets.waiting.runId}/cancel`;
    const retry = `/v1/runs/${targets.failed.runId}/retry`;
    const kinds: { name: string; contentType?: string; body?: string }[] = [
      { name: 'no content-type, no body' },
      { name: 'no content-type, a JSON body', body: '{}' },
      { name: 'text/plain', contentType: 'text/plain', body: '{}' },
      { name: 'form', contentType: 'application/x-www-form-urlencoded', body: 'reason=x' },
      { name: 'multipart', contentType: 'multipart/form-data; boundary=b', body: '--b--\r\n' },
      { name: 'a JSON look-alike', contentType: 'application/jsonp', body: '{}' },
    ];
    const targetsOfAttack = [
      { method: 'POST', path: cancel },
      { method: 'POST', path: retry },
      { method: 'POST', path: '/v1/sessions' },
      { method: 'POST', path: '/v1/runs' },
      { method: 'POST', path: `/v1/sessions/${targets.waiting.sessionId}/messages` },
      { method: 'DELETE', path: `/v1/sessions/${targets.waiting.sessionId}` },
    ];
    const host = new URL(api.url).host;
    for (const target of targetsOfAttack) {
      for (const kind of kinds) {
        // Written byte for byte: Node's client would add a content-type of its own to a body.
        const body = kind.body ?? '';
        const lines = [
          `${target.method} ${target.path} HTTP/1.1`,
          `Host: ${host}`,
          ...(kind.contentType === undefined ? [] : [`Content-Type: ${kind.contentType}`]),
          `Content-Length: ${Buffer.byteLength(body)}`,
          'Connection: close',
          '',
          body,
        ];
        const answer = await rawSocketRequest(api.url, lines.join('\r\n'));
        expect({ ...target, kind: kind.name, status: answer.status }).toEqual({
          ...target,
          kind: kind.name,
          status: 415,
        });
        expect(answer.json.error.details.issues).toEqual([
          {
            location: 'headers',
            path: 'content-type',
            message: `${target.method} needs content-type: application/json, with a JSON body or none (a guard against requests from other sites)`,
          },
        ]);
      }
    }
    expect(await stateOf(api, targets)).toEqual(before);

    // With the header, and no body, the same requests work (as the typed client, the CLI and the console
    // send them).
    const json = { 'content-type': 'application/json' };
    expect((await rawRequest(api.url, { method: 'POST', path: cancel, headers: json })).status).toBe(202);
    expect((await rawRequest(api.url, { method: 'POST', path: retry, headers: json })).status).toBe(202);
    const charset = { 'content-type': 'Application/JSON; charset=utf-8' };
    const created = await rawRequest(api.url, { method: 'POST', path: '/v1/sessions', headers: charset });
    expect(created.status).toBe(201);
    const deleted = await rawRequest(api.url, {
      method: 'DELETE',
      path: `/v1/sessions/${created.json.id}`,
      headers: json,
    });
    expect(deleted.status).toBe(204);
  }, 60_000);

  it('holds with api.tokens too, after the token check', async () => {
    const token = 'cross-site-token-0123456789';
    api = await ApiHarness.start({ script, worker: false, api: { tokens: [token] } });
    const withoutToken = await rawRequest(api.url, { method: 'POST', path: '/v1/sessions' });
    expect(withoutToken.status).toBe(401);
    const authorization = `Bearer ${token}`;
    const withoutType = await rawRequest(api.url, {
      method: 'POST',
      path: '/v1/sessions',
      headers: { authorization },
    });
    expect(withoutType.status).toBe(415);
    const withType = await rawRequest(api.url, {
      method: 'POST',
      path: '/v1/sessions',
      headers: { authorization, 'content-type': 'application/json' },
    });
    expect(withType.status).toBe(201);
  });

  it('a request shaped as a page of another local port would send it, JSON included, is refused by its Origin', async () => {
    api = await ApiHarness.start({ script, worker: false });
    const port = Number(new URL(api.url).port);
    for (const origin of [`http://localhost:${port + 1}`, `http://127.0.0.1:${port + 1}`, 'null']) {
      const answer = await rawRequest(api.url, {
        method: 'POST',
        path: '/v1/sessions',
        body: '{}',
        headers: { host: `localhost:${port}`, origin },
      });
      expect({ origin, status: answer.status }).toEqual({ origin, status: 403 });
      expect(answer.json.error.message).toContain('api.allowed_origins');
    }
  });
});
