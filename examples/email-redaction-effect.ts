// A custom effect: e-mail addresses are redacted from everything the model is sent, while the transcript
// keeps them. Run it with `npx tsx examples/email-redaction-effect.ts` against the Redis at REDIS_URL
// (default redis://127.0.0.1:6379); the model is a scripted one, so no API key is needed.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfigText } from '../src/index.js';
import { withLocalWorker } from './kinds/local-worker.js';
import { redactEmails } from './kinds/redact-emails.js';

// The effect is defined in examples/kinds/redact-emails.ts.
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
try {
  await withLocalWorker(loaded, extensions, async (engine) => {
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
  });
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
