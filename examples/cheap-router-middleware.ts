// A custom middleware: short requests go to a cheaper model of the same provider, and the choice is recorded
// with each reply (a repeated step reads it instead of choosing again). Run it with
// `npx tsx examples/cheap-router-middleware.ts` against the Redis at REDIS_URL (default
// redis://127.0.0.1:6379); the models are scripted ones, so no API key is needed.
import { parseConfigText } from '../src/index.js';
import { cheapRouter } from './kinds/cheap-router.js';
import { withLocalWorker } from './kinds/local-worker.js';

// The middleware is defined in examples/kinds/cheap-router.ts.
const extensions = { middleware: [cheapRouter] };

// Two entries of one provider, a large model and a small one (with real APIs: two `openai` entries with
// different `model`s). Scripted here, each answering as itself.
const yaml = `
providers:
  - { name: large, kind: scripted, model: large-model, replies: [{ text: "A long answer from the large model." }] }
  - { name: small, kind: scripted, model: small-model, replies: [{ text: "4" }] }
agents:
  - name: assistant
    provider: large
    instructions: Answer briefly.
    middleware: [{ kind: cheap_router, cheap_provider: small, max_chars: 100 }]
redis:
  url: \${REDIS_URL:-redis://127.0.0.1:6379}
  prefix: \${RATCHET_PREFIX:-ratchet-examples}
`;
// From a file this is `loadConfig('ratchet.yaml', { extensions })`: the config may name the middleware.
const loaded = parseConfigText(yaml, { env: process.env, configDir: process.cwd(), extensions });
await withLocalWorker(loaded, extensions, async (engine) => {
  const inputs = [
    'What is 2 + 2?',
    'Summarise the history of the printing press, from movable type in East Asia to Gutenberg, in detail.',
  ];
  for (const input of inputs) {
    const { runId } = await engine.startRun({ input });
    const run = await engine.waitForRun(runId, { timeoutMs: 60_000 });
    const steps = await engine.runSteps(runId, { from: 1, limit: 10, cutAt: 200 });
    const models = steps?.steps.map((step) => `${step.provider}/${step.model}`).join(', ');
    console.log(`${run.status} by ${models}: ${run.result}`);
  }
});
