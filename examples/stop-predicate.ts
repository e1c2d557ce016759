// A stop condition written in code: a writer and an editor take turns (round_robin_until) until the latest
// answer is long enough. Run it with `npx tsx examples/stop-predicate.ts` against the Redis at REDIS_URL
// (default redis://127.0.0.1:6379); the models are scripted (no API key).
import { parseConfigText } from '../src/index.js';
import { withLocalWorker } from './kinds/local-worker.js';
import { longEnough } from './kinds/long-enough.js';

// The stop condition is defined in examples/kinds/long-enough.ts.
const extensions = { stopConditions: [longEnough] };

const yaml = `
providers:
  - name: writer-model
    kind: scripted
    model: demo
    replies: [{ text: "A fox jumps." }, { text: "A quick brown fox jumps over the lazy dog at dawn." }]
  - { name: editor-model, kind: scripted, model: demo, replies: [{ text: "Too short: say more." }] }
agents:
  - { name: writer, provider: writer-model }
  - { name: editor, provider: editor-model }
teams:
  - name: studio
    members: [{ agent: writer }, { agent: editor }]
    coordinator: { kind: round_robin_until, until: { long_enough: { words: 8 } }, max_rounds: 5 }
entry_agent: studio
redis:
  url: \${REDIS_URL:-redis://127.0.0.1:6379}
  prefix: \${RATCHET_PREFIX:-ratchet-examples}
`;
// From a file this is `loadConfig('ratchet.yaml', { extensions })`.
const loaded = parseConfigText(yaml, { env: process.env, configDir: process.cwd(), extensions });
await withLocalWorker(loaded, extensions, async (engine) => {
  const { runId, sessionId } = await engine.startRun({ input: 'Write one sentence about a fox.' });
  const run = await engine.waitForRun(runId, { timeoutMs: 60_000 });
  console.log(run.status, run.result);
  for (const message of await engine.readChat(sessionId)) {
    const text = message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
    console.log(`${message.sender}: ${text}`);
  }
});
