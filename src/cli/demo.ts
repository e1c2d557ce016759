// `npm run demo [-- "task"] [--config F]`: a worker and a run in one process, events printed as they happen.
import { parseArgs } from 'node:util';
import '../models/index.js';
import { ConfigError, loadConfig, resolveEntryAgent } from '../config/index.js';
import { runEndKinds } from '../events/event.js';
import { createLogger } from '../log/index.js';
import { closeRedis, createRedis } from '../redis/connection.js';
import { builtinToolboxes } from '../tools/builtin/index.js';
import { RatchetWorker } from '../worker/index.js';
import { Engine } from '../workflows/engine.js';
import { finalFailureHeadroom } from '../workflows/step-queues.js';
import { renderEvent } from './render-event.js';

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: { config: { type: 'string', short: 'c', default: 'config/demo.yaml' } },
  allowPositionals: true,
});
const task = positionals.join(' ') || 'What is 17 × 23 + 5? And how many words are in our motto?';
const toolboxes = builtinToolboxes();

let loaded: ReturnType<typeof loadConfig>;
try {
  loaded = loadConfig(values.config, { knownToolboxes: toolboxes.map((toolbox) => toolbox.name) });
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(2);
}
const { config } = loaded;
const logger = createLogger({ level: process.env.RATCHET_LOG_LEVEL ?? 'warn' });
const redis = createRedis({ url: config.redis.url, logger, name: 'ratchet-demo', maxRetriesPerRequest: 1 });
try {
  await redis.ping();
} catch {
  console.error(
    `Redis does not answer at ${config.redis.url}. Start one (redis-server, or docker compose up redis) or set REDIS_URL.`,
  );
  redis.disconnect();
  process.exit(1);
}

const worker = new RatchetWorker({ loaded, toolboxes, logger });
await worker.start();
const engine = new Engine({
  redis,
  space: { prefix: config.redis.prefix, shards: config.redis.shards },
  jobs: {
    attempts: config.worker.step_attempts + finalFailureHeadroom,
    keepCompletedSeconds: config.worker.keep_completed_jobs_s,
  },
  eventsMaxLength: config.events.max_len,
  agents: config.agents.map((agent) => agent.name),
  defaultAgent: resolveEntryAgent(config),
  logger,
});

const { runId, sessionId } = await engine.startRun({ input: task });
console.log(`run ${runId} (session ${sessionId})`);
let after: string | undefined;
let finished = false;
while (!finished) {
  const events = await engine.readEvents(sessionId, after === undefined ? {} : { after });
  for (const event of events) {
    after = event.id;
    const line = renderEvent(event);
    if (line) console.log(line);
    if (event.run_id === runId && runEndKinds.includes(event.kind)) finished = true;
  }
  if (!finished) await new Promise((resolve) => setTimeout(resolve, 100));
}
const run = await engine.getRun(runId);
console.log(`\nanswer: ${run?.result ?? run?.error?.message ?? '(none)'}`);
await engine.close();
await worker.close();
await closeRedis(redis);
process.exit(run?.status === 'completed' ? 0 : 1);
