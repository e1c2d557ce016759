// An effect acting after the reply: a short final answer gets a reviewer's note in the transcript and a
// progress event. Run it with `npx tsx examples/after-reply-effect.ts` against the Redis at REDIS_URL
// (default redis://127.0.0.1:6379); the model is a scripted one, so no API key is needed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfigText, textOf } from '../src/index.js';
import { answerReview } from './kinds/answer-review.js';
import { withLocalWorker } from './kinds/local-worker.js';

// The effect is defined in examples/kinds/answer-review.ts.
const extensions = { effects: [answerReview] };

const workDir = mkdtempSync(join(tmpdir(), 'ratchet-after-'));
const yaml = `
providers:
  - name: scripted
    kind: scripted
    model: demo
    replies: [{ text: "Refund sent." }]
agents:
  - name: support
    provider: scripted
    instructions: You answer customer e-mails.
    effects: [{ kind: answer_review, params: { min_words: 5 } }]
redis:
  url: \${REDIS_URL:-redis://127.0.0.1:6379}
  prefix: \${RATCHET_PREFIX:-ratchet-examples}
`;
const loaded = parseConfigText(yaml, { env: process.env, configDir: workDir, extensions });
try {
  await withLocalWorker(loaded, extensions, async (engine) => {
    const { runId, sessionId } = await engine.startRun({ input: 'Was my refund sent?' });
    const run = await engine.waitForRun(runId, { timeoutMs: 60_000 });
    console.log(run.status, run.result);
    // The note follows the answer in the transcript; the event is in the session's log.
    for (const message of await engine.readChat(sessionId))
      console.log(`${message.sender}: ${textOf(message)}`);
    for (const event of await engine.readEvents(sessionId))
      if (event.kind === 'progress') console.log(`progress: ${JSON.stringify(event.data)}`);
  });
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
