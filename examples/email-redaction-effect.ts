// A custom effect: e-mail addresses are redacted from everything the model is sent, while the transcript
// keeps them. Run it with `npx tsx examples/email-redaction-effect.ts` against the Redis at REDIS_URL
// (default redis://127.0.0.1:6379); the model is a scripted one, so no API key is needed.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import {
  closeRedis,
  createLogger,
  createRedis,
  defineEffect,
  engineFromConfig,
  type Message,
  parseConfigText,
  RatchetWorker,
} from '../src/index.js';

const emailAddress = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;

/** Before every model call of an agent that lists it: addresses in text and tool results are replaced. */
const redactEmails = defineEffect({
  kind: 'redact_emails',
  options: z.strictObject({ replacement: z.string().default('[email removed]') }),
  plan: (view, { options }) => ({
    kind: 'messages',
    messages: view.messages.map(
      (message): Message => ({
        ...message,
        parts: message.parts.map((part) => {
          if (part.type === 'text')
            return { ...part, text: part.text.replace(emailAddress, options.replacement) };
          if (part.type === 'tool_result')
            return { ...part, content: part.content.replace(emailAddress, options.replacement) };
          return part;
        }),
      }),
    ),
  }),
});
const extensions = { effects: [redactEmails] };

// The scripted provider writes every request it gets to `record_calls`: this example prints what it saw.
const workDir = mkdtempSync(join(tmpdir(), 'ratchet-redaction-'));
const callLog = join(workDir, 'calls.jsonl');
const yaml = `
providers:
  - name: scripted
    kind: scripted
    model: demo
    replies: [{ text: "Drafted the refund note for the customer." }]
    record_calls: ${callLog}
agents:
  - name: support
    provider: scripted
    instructions: You answer customer e-mails.
    effects: [{ kind: redact_emails }]
redis:
  url: \${REDIS_URL:-redis://127.0.0.1:6379}
  prefix: \${RATCHET_PREFIX:-ratchet-examples}
`;
// From a file this is `loadConfig('ratchet.yaml', { extensions })`: the config may name the effect's kind.
const loaded = parseConfigText(yaml, { env: process.env, configDir: workDir, extensions });
const logger = createLogger({ level: 'warn' });
const worker = new RatchetWorker({ loaded, toolboxes: [], logger, extensions });
await worker.start();
const redis = createRedis({ url: loaded.config.redis.url, logger, name: 'example' });
const engine = engineFromConfig({ config: loaded.config, redis, logger });

try {
  const { runId, sessionId } = await engine.startRun({
    input: 'Write to jane.doe@example.com that her refund was sent.',
  });
  const run = await engine.waitForRun(runId, { timeoutMs: 60_000 });
  console.log(run.status, run.result);
  for (const line of readFileSync(callLog, 'utf8').trim().split('\n')) {
    const call = JSON.parse(line) as { messages: { role: string; text: string }[] };
    for (const message of call.messages) console.log(`model was sent (${message.role}): ${message.text}`);
  }
  const [input] = (await engine.readChat(sessionId)).filter((message) => message.role === 'user');
  const text = input?.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
  console.log(`transcript keeps: ${text}`);
} finally {
  await engine.close();
  await worker.close();
  await closeRedis(redis);
  rmSync(workDir, { recursive: true, force: true });
}
