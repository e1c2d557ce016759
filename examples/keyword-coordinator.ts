// A custom coordinator: a team whose coordinator gives the task to the member whose role is named in it,
// once, and is done when that member has answered. Run it with `npx tsx examples/keyword-coordinator.ts`
// against the Redis at REDIS_URL (default redis://127.0.0.1:6379); the models are scripted (no API key).
import { parseConfigText } from '../src/index.js';
import { keywordCoordinator } from './kinds/keyword-coordinator.js';
import { withLocalWorker } from './kinds/local-worker.js';

// The coordinator is defined in examples/kinds/keyword-coordinator.ts.
const extensions = { coordinators: [keywordCoordinator] };

const scripted = (name: string, reply: string) =>
  `  - { name: ${name}, kind: scripted, model: demo, replies: [{ text: "${reply}" }] }`;
const yaml = `
providers:
${scripted('writer-model', 'Here is a first draft.')}
${scripted('reviewer-model', 'Reviewed: the second sentence needs a verb.')}
${scripted('translator-model', 'Traduit en français.')}
agents:
  - { name: writer, provider: writer-model }
  - { name: reviewer, provider: reviewer-model }
  - { name: translator, provider: translator-model }
teams:
  - name: desk
    members:
      - { agent: writer, role: draft }
      - { agent: reviewer, role: review }
      - { agent: translator, role: translation }
    coordinator: { kind: keyword, fallback_role: draft }
entry_agent: desk
redis:
  url: \${REDIS_URL:-redis://127.0.0.1:6379}
  prefix: \${RATCHET_PREFIX:-ratchet-examples}
`;
// From a file this is `loadConfig('ratchet.yaml', { extensions })`.
const loaded = parseConfigText(yaml, { env: process.env, configDir: process.cwd(), extensions });
await withLocalWorker(loaded, extensions, async (engine) => {
  const { runId, sessionId } = await engine.startRun({ input: 'Please review: The fox quickly the fence.' });
  const run = await engine.waitForRun(runId, { timeoutMs: 60_000 });
  console.log(run.status, run.result);
  // The team's shared chat: the task, then the answer of each member that acted.
  for (const message of await engine.readChat(sessionId)) {
    const text = message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
    console.log(`${message.sender}: ${text}`);
  }
});
