// Ratchet from code: a worker and an engine in one process, on the demo config (scripted model, no API key).
// Run it with `npx tsx examples/engine-from-code.ts`. It uses the Redis at REDIS_URL (default
// redis://127.0.0.1:6379) when one answers; otherwise, like `ratchet dev`, it starts `redis-server` from the
// PATH for that address (data in .ratchet/redis) and stops it at the end, or fails at once saying how to start
// Redis. In production the worker runs in processes of its own (`ratchet worker`).
import { fileURLToPath } from 'node:url';
import {
  closeRedis,
  createLogger,
  createRedis,
  engineFromConfig,
  ensureRedis,
  loadConfig,
  RatchetWorker,
} from '../src/index.js';

const loaded = loadConfig(fileURLToPath(new URL('../config/demo.yaml', import.meta.url)));
const logger = createLogger({ level: 'warn' });

// Without this, a worker would wait for ever for a Redis that never answers.
const localRedis = await ensureRedis({
  url: loaded.config.redis.url,
  dataDir: '.ratchet/redis',
  say: (line) => console.log(line),
}).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});

// Executes steps (model calls, tool calls) of every run.
const worker = new RatchetWorker({ loaded, toolboxes: [], logger });
await worker.start();

// Starts runs, answers questions and reads results; any number of processes may hold one.
const redis = createRedis({ url: loaded.config.redis.url, logger, name: 'example' });
const engine = engineFromConfig({ config: loaded.config, redis, logger });

try {
  const { runId, sessionId } = await engine.startRun({ input: 'What is 17 × 23 + 5?' });

  // The demo agent asks one question (ask_user); the run waits, holding no worker, until it is answered.
  let questions = await engine.listQuestions(sessionId);
  while (questions.length === 0) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    questions = await engine.listQuestions(sessionId);
  }
  const [question] = questions;
  if (question) await engine.respond(sessionId, question.id, 'digits');

  const run = await engine.waitForRun(runId, { timeoutMs: 60_000 }); // status, result, error, usage
  console.log(run.status, run.result);
  const chat = await engine.readChat(sessionId); // the whole transcript
  const events = await engine.readEvents(sessionId); // the durable event log
  console.log(`${chat.length} messages, ${events.length} events`);
} finally {
  await engine.close();
  await worker.close();
  await closeRedis(redis);
  await localRedis.stop();
}
