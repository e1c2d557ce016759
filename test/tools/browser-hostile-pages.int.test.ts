import { createSocket, type Socket } from 'node:dgram';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { type Message, toolResultsOf } from '../../src/chat/index.js';
import type { Script } from '../../src/models/index.js';
import { describeWithBrowser } from '../helpers/browser.js';
import { hostileSite, type PageServer, startPageServer } from '../helpers/browser-pages.js';
import { Harness, type WorkerProcess } from '../helpers/harness.js';

// A hostile scripted model on hostile pages, against a worker in a child process of its own: whatever the
// pages do, the process must live on, its memory stay bounded, and its answers too.

let site: PageServer;
let udp: Socket;
let tcp: Server;
/** What reached the listeners on 127.0.0.1 that WebRTC pages aim at. */
const heard: string[] = [];
const bigRequests: number[] = [];
let harness: Harness | undefined;

beforeAll(async () => {
  udp = createSocket('udp4');
  udp.on('message', (message, from) =>
    heard.push(`udp ${from.address}:${from.port} ${message.length} bytes`),
  );
  await new Promise<void>((bound) => udp.bind(0, '127.0.0.1', bound));
  const port = udp.address().port;
  // TURN over TCP, on the same port number.
  tcp = createServer((connection) => {
    heard.push('tcp connection');
    connection.destroy();
  });
  await new Promise<void>((listening) => tcp.listen(port, '127.0.0.1', listening));
  site = await startPageServer(hostileSite({ udpPort: () => port, bigRequests }));
});
afterAll(async () => {
  await site.close();
  udp.close();
  await new Promise((closed) => tcp.close(closed));
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const call = (name: string, args: Record<string, unknown> = {}) => ({
  text: `calling ${name}`,
  tool_calls: [{ name, arguments: args }],
});

function browserHarness(script: Script, browser: Record<string, unknown> = {}): Harness {
  const created = new Harness({
    script,
    maxIterations: 20,
    agent: { toolboxes: ['browser', 'test'] },
    // Handing a 10 MB body to Chromium (base64, one DevTools message) holds the worker's loop for up to
    // ~0.3 s; on a loaded test machine that misses the tests' 2 s locks, and a step taken over and run again
    // is not what these tests look at. The default lock is 10 s.
    worker: { lock_duration_ms: 15_000, stalled_interval_ms: 5_000 },
    config: {
      tools: {
        workspace: 'workspace',
        // Generous: several test files drive Chromium at once on a small machine.
        browser: { private_hosts: ['127.0.0.1'], action_timeout_ms: 30_000, ...browser },
      },
    },
  });
  mkdirSync(join(created.dir, 'workspace'), { recursive: true });
  harness = created;
  return created;
}

/** Starts a run and waits for it to complete, with the worker's output in the message if it does not. */
async function completedRun(started: Harness, worker: WorkerProcess | undefined, input = 'browse') {
  const { runId, sessionId } = await started.engine.startRun({ input });
  const run = await started.engine.waitForRun(runId, { timeoutMs: 120_000 });
  expect(run.status, worker?.output()).toBe('completed');
  const chat = await started.transcript(sessionId);
  return { runId, sessionId, results: chat.filter((message) => message.role === 'tool').map(resultOf) };
}

function resultOf(message: Message) {
  const [result] = toolResultsOf(message);
  if (!result) throw new Error('no tool result');
  return result;
}

// biome-ignore lint/suspicious/noExplicitAny: tests read fields of the page summaries
function ok(result: { content: string; is_error: boolean }): any {
  if (result.is_error) throw new Error(`expected success, got: ${result.content}`);
  return JSON.parse(result.content);
}

function alive(worker: WorkerProcess): boolean {
  return worker.child.exitCode === null && worker.child.signalCode === null;
}

/** The worker process's peak resident memory so far (VmHWM), in MB. */
function peakRssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('VmHWM:'));
  return Number(line?.match(/(\d+)/)?.[1] ?? Number.NaN) / 1024;
}

describeWithBrowser('hostile pages against a worker process', () => {
  it('a page that opens windows (window.open, a target=_blank link, a target=_blank form) does not end the worker', {
    timeout: 180_000,
  }, async () => {
    const started = browserHarness({
      replies: [
        call('browser_open', { url: `${site.origin}/opens-windows` }),
        call('browser_click', { selector: '#blank-link' }),
        call('browser_click', { selector: '#blank-form button' }),
        call('browser_read', { selector: 'h1' }),
        { text: 'done' },
      ],
    });
    const worker = started.spawnWorker();
    const { results } = await completedRun(started, worker);
    expect(alive(worker), worker.output()).toBe(true);
    const [opened, link, form, read] = results.map(ok);
    // Each window was refused, named for the model (which may open its URL), and the page stayed where it was.
    const newWindow = 'the page opened a new window, which was closed: open its URL with browser_open';
    expect(opened.blocked).toContainEqual({ url: `${site.origin}/window-opened`, reason: newWindow });
    expect(link.blocked).toContainEqual({ url: `${site.origin}/link-target`, reason: newWindow });
    expect(form.blocked).toContainEqual({ url: `${site.origin}/form-target?q=1`, reason: newWindow });
    expect(read).toMatchObject({ url: `${site.origin}/opens-windows`, content: 'A page with windows' });
    // The windows loaded nothing.
    expect(site.requests.filter((path) => /target|opened/.test(path))).toEqual([]);
    // And the same worker goes on taking work (a second run, of the same script).
    const again = await completedRun(started, worker, 'browse again');
    expect(again.results.map((result) => result.is_error)).toEqual([false, false, false, false]);
    expect(alive(worker), worker.output()).toBe(true);
  });

  it('a page loading 10 MB resources 40 at a time keeps the worker under 600 MB, and loads nothing between calls', {
    timeout: 180_000,
  }, async () => {
    const started = browserHarness({
      replies: [
        call('browser_open', { url: `${site.origin}/hog` }),
        // About 6 s under load, then 4 s with no browser call at all.
        call('browser_wait', { text: 'done' }),
        call('slow_echo', { text: 'pause', delay_ms: 4_000 }),
        call('browser_read', { selector: '#count' }),
        { text: 'done' },
      ],
    });
    bigRequests.length = 0;
    const worker = started.spawnWorker();
    const { sessionId, results } = await completedRun(started, worker);
    const peakMb = peakRssMb(worker.child.pid as number);
    expect(alive(worker), worker.output()).toBe(true);
    expect(results.map((result) => result.is_error)).toEqual([false, false, false, false]);
    // The page did load (its 10 MB resources reached it), within the bound the docs state.
    expect(Number(ok(results[3] as (typeof results)[number]).content)).toBeGreaterThan(5);
    expect(peakMb).toBeLessThan(600);
    // Between the calls (while slow_echo ran) no resource was asked for: the page loads nothing then.
    const events = await started.events(sessionId);
    const pauseStart = events.find(
      (event) => event.kind === 'tool_call_start' && event.data.name === 'slow_echo',
    );
    const pauseEnd = events.find(
      (event) => event.kind === 'tool_call_end' && event.data.name === 'slow_echo',
    );
    const from = Date.parse(pauseStart?.time ?? '') + 300;
    const to = Date.parse(pauseEnd?.time ?? '');
    expect(to - from).toBeGreaterThan(3_000);
    expect(bigRequests.filter((time) => time >= from && time <= to)).toEqual([]);
  });
});

describeWithBrowser('hostile pages against the model’s answers', () => {
  it('a redirect cannot open chrome: or data: pages, nor can the page navigate itself to one', async () => {
    const started = browserHarness({
      replies: [
        call('browser_open', { url: `${site.origin}/redirect-chrome` }),
        call('browser_read', {}),
        call('browser_open', { url: `${site.origin}/redirect-data` }),
        call('browser_open', { url: `${site.origin}/redirect-twice-to-data` }),
        call('browser_open', { url: `${site.origin}/link-to-redirect-chrome` }),
        call('browser_click', { selector: '#chrome' }),
        call('browser_read', {}),
        call('browser_open', { url: `${site.origin}/location-data` }),
        call('browser_read', {}),
        call('browser_open', { url: `${site.origin}/meta-data` }),
        call('browser_read', {}),
        call('browser_open', { url: `${site.origin}/to-blob` }),
        call('browser_read', {}),
        { text: 'done' },
      ],
    });
    await started.startWorker();
    const { results } = await completedRun(started, undefined);
    const text = (index: number) => results[index]?.content ?? '';
    expect(results[0]?.is_error).toBe(true);
    expect(text(0)).toContain(
      `${site.origin}/redirect-chrome redirected to chrome://version: only http and https pages may be opened, not chrome:`,
    );
    expect(results[2]?.is_error).toBe(true);
    expect(text(2)).toContain('only http and https pages may be opened, not data:');
    expect(text(3)).toContain('/redirect-data redirected to data:text/html;base64,');
    // A link the page's own click followed is redirected as the model's URL would be: refused.
    expect(results[5]?.is_error).toBe(true);
    expect(text(5)).toContain('the page was redirected to chrome://version: only http and https pages');
    // Chromium refuses a page's own navigation to data: (location, meta refresh): the page stays.
    expect(ok(results[8] as (typeof results)[number])).toMatchObject({ url: `${site.origin}/location-data` });
    expect(ok(results[10] as (typeof results)[number])).toMatchObject({ url: `${site.origin}/meta-data` });
    // A blob: document the page opened itself is left, and the model told.
    const blob = [ok(results[11] as (typeof results)[number]), ok(results[12] as (typeof results)[number])];
    expect(blob[1]).toMatchObject({ url: 'about:blank', content: '' });
    expect(JSON.stringify(blob)).toContain('the page navigated itself to a URL that is not http(s)');
    // No answer ever showed a chrome: or data: page, nor anything they hold.
    const all = results.map((result) => result.content).join('\n');
    expect(all).not.toMatch(/"url":"(chrome|data):/);
    expect(all).not.toContain('Command Line');
    expect(all).not.toContain('data page ran');
    expect(all).not.toContain('data script ran');
    expect(all).not.toContain('blob page ran');
  });

  it('cuts a 5,000,000-character title, a 1,000,000-character URL, an option value and a download failure', async () => {
    const started = browserHarness(
      {
        replies: [
          call('browser_open', { url: `${site.origin}/huge-answers` }),
          call('browser_select', { selector: '#pick', values: ['B'] }),
          call('browser_click', { selector: '#download' }),
          call('browser_read', { selector: '#pick' }),
          { text: 'done' },
        ],
      },
      { downloads: true },
    );
    await started.startWorker();
    const { results } = await completedRun(started, undefined);
    const answers = results.map(ok);
    for (const result of results) expect(result.content.length).toBeLessThan(10_000);
    // The title is the page's own (the getters it redefined do not reach the worker's world), cut.
    expect(answers[0].title).toBe(`${'T'.repeat(500)}…`);
    expect(answers[0].url).toBe(`${`${site.origin}/huge-answers?${'u'.repeat(1_000_000)}`.slice(0, 2_000)}…`);
    expect(answers[1].selected).toEqual([`${'v'.repeat(500)}…`]);
    // The download's failure reaches the model with the click, or with the next call, cut.
    const failures = [answers[2], answers[3]].flatMap((answer) => answer.blocked ?? []);
    const download = failures.find((blocked: { reason: string }) =>
      blocked.reason.startsWith('download failed'),
    );
    expect(download?.reason).toContain('169.254.169.254');
    expect(download?.url).toHaveLength(501);
  });

  it.each([
    ['Chromium’s WebRTC policy alone', 'off'],
    ['the network namespace, where it can be made', 'auto'],
  ])(
    'WebRTC sends nothing to a UDP or TCP listener on loopback: %s',
    async (_name, networkNamespace) => {
      heard.length = 0;
      const started = browserHarness(
        {
          replies: [
            call('browser_open', { url: `${site.origin}/webrtc` }),
            call('browser_wait', { text: 'gathered' }),
            call('browser_read', { selector: '#status' }),
            { text: 'done' },
          ],
        },
        { network_namespace: networkNamespace },
      );
      await started.startWorker();
      const { results } = await completedRun(started, undefined);
      // Gathering is over: any STUN or TURN packet would have been sent by now (loopback delivers at once).
      expect(ok(results[2] as (typeof results)[number]).content).toBe('gathered 0 candidates');
      expect(heard).toEqual([]);
      // A worker starting Chromium in a network namespace of its own takes a while on a loaded machine.
    },
    90_000,
  );
});
