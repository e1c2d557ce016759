// A custom coordinator: a team whose coordinator gives the task to the member whose role is named in it,
// once, and is done when that member has answered. Run it with `npx tsx examples/keyword-coordinator.ts`
// against the Redis at REDIS_URL (default redis://127.0.0.1:6379); the models are scripted (no API key).
import { z } from 'zod';
import {
  closeRedis,
  createLogger,
  createRedis,
  defineCoordinator,
  engineFromConfig,
  parseConfigText,
  RatchetWorker,
} from '../src/index.js';

/** Turn 0: the first member whose role appears in the task (or `fallback_role`'s); then done. */
const keywordCoordinator = defineCoordinator({
  kind: 'keyword',
  options: z.strictObject({ fallback_role: z.string().min(1) }),
  select: (view, { options }) => {
    if (view.turn > 0) return { done: true };
    const task = view.lastText.toLowerCase();
    const member =
      view.team.members.find((candidate) => task.includes(candidate.role.toLowerCase())) ??
      view.team.members.find((candidate) => candidate.role === options.fallback_role);
    return member ? { act: [member.agent] } : { fail: `no member has the role "${options.fallback_role}"` };
  },
});
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
const logger = createLogger({ level: 'warn' });
const worker = new RatchetWorker({ loaded, toolboxes: [], logger, extensions });
await worker.start();
const redis = createRedis({ url: loaded.config.redis.url, logger, name: 'example' });
const engine = engineFromConfig({ config: loaded.config, redis, logger });

try {
  const { runId, sessionId } = await engine.startRun({ input: 'Please review: The fox quickly the fence.' });
  const run = await engine.waitForRun(runId, { timeoutMs: 60_000 });
  console.log(run.status, run.result);
  // The team's shared chat: the task, then the answer of each member that acted.
  for (const message of await engine.readChat(sessionId)) {
    const text = message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
    console.log(`${message.sender}: ${text}`);
  }
} finally {
  await engine.close();
  await worker.close();
  await closeRedis(redis);
}
