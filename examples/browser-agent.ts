// An agent that uses the browser: it opens a page this example serves itself, fills in its form, reads the answer
// and takes a screenshot, driven by a scripted model (no API key). Run it with `npx tsx examples/browser-agent.ts`.
// It needs Chromium on the PATH (Debian: apt-get install chromium; nothing is downloaded) and the Redis at
// REDIS_URL (default redis://127.0.0.1:6379), or redis-server on the PATH to start one, as engine-from-code.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  closeRedis,
  createLogger,
  createRedis,
  DEFAULT_REDIS_URL,
  engineFromConfig,
  ensureRedis,
  parseConfigText,
  RatchetWorker,
  toolResultsOf,
} from '../src/index.js';

// The page the agent visits: a form that answers on another page.
const site = createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://localhost');
  response.writeHead(url.pathname === '/' || url.pathname === '/greet' ? 200 : 404, {
    'content-type': 'text/html; charset=utf-8',
  });
  if (url.pathname === '/') {
    response.end(`<!doctype html><title>Greeter</title><h1>Greeter</h1>
      <form action="/greet"><label>Name <input id="name" name="name"></label><button>Greet</button></form>`);
  } else if (url.pathname === '/greet') {
    const name = (url.searchParams.get('name') ?? '').replace(/[^\w ]/g, '');
    response.end(`<!doctype html><title>Greeting</title><p id="greeting">Hello, ${name}!</p>`);
  } else response.end();
});
await new Promise<void>((done) => site.listen(0, '127.0.0.1', done));
const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

const call = (name: string, args: Record<string, unknown> = {}) => ({
  tool_calls: [{ name, arguments: args }],
});
const configDir = mkdtempSync(join(tmpdir(), 'ratchet-browser-example-'));
// JSON is YAML: the config as the file would hold it, with the page's address filled in.
const loaded = parseConfigText(
  JSON.stringify({
    redis: { url: process.env.REDIS_URL ?? DEFAULT_REDIS_URL, prefix: 'browser-example' },
    providers: [
      {
        name: 'scripted',
        kind: 'scripted',
        model: 'script',
        replies: [
          call('browser_open', { url: origin }),
          call('browser_type', { selector: '#name', text: 'Ada', submit: true }),
          call('browser_read', { selector: '#greeting' }),
          call('browser_screenshot'),
          { text: 'The page greeted Ada.' },
        ],
      },
    ],
    agents: [{ name: 'browser', provider: 'scripted', toolboxes: ['browser'] }],
    // The page is on loopback, which the browser refuses unless the host is trusted by name.
    tools: { browser: { private_hosts: ['127.0.0.1'] } },
  }),
  { env: process.env, configDir },
);
const logger = createLogger({ level: 'warn' });

const localRedis = await ensureRedis({
  url: loaded.config.redis.url,
  dataDir: '.ratchet/redis',
  say: (line) => console.log(line),
}).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
const worker = new RatchetWorker({ loaded, toolboxes: [], logger });
await worker.start();
const redis = createRedis({ url: loaded.config.redis.url, logger, name: 'example' });
const engine = engineFromConfig({ config: loaded.config, redis, logger });

try {
  const { runId, sessionId } = await engine.startRun({ input: 'Greet Ada on the greeter page.' });
  const run = await engine.waitForRun(runId, { timeoutMs: 120_000 });
  console.log(run.status, run.result);
  const results = (await engine.readChat(sessionId)).flatMap(toolResultsOf);
  const read = results.find((result) => result.content.includes('"content"'));
  console.log('read:', read?.content);
  const image = results.find((result) => result.images !== undefined)?.images?.[0];
  console.log(`screenshot: ${image?.media_type}, ${Buffer.from(image?.data ?? '', 'base64').length} bytes`);
} finally {
  await engine.close();
  await worker.close();
  await closeRedis(redis);
  await localRedis.stop();
  site.close();
  rmSync(configDir, { recursive: true, force: true });
}
