import { RatchetClient } from '../src/client/index.js';

const client = new RatchetClient({ baseUrl: process.env.RATCHET_URL ?? 'http://127.0.0.1:8080' });
const { run_id: runId, session_id: sessionId } = await client.submit({ input: 'Plan a weekend in Lisbon' });

// Every event of the session until the run's last one; a dropped connection resumes where it stopped.
for await (const event of client.events(sessionId, { untilRunEnds: runId })) {
  if (event.kind === 'tool_call_start') console.log(`${event.agent} calls ${event.data.name}`);
  if (event.kind === 'ask_user') {
    console.log(`${event.agent} asks: ${event.data.question}`);
    await client.answer(sessionId, event.data.question_id, 'Next weekend');
  }
}
const run = await client.wait(runId);
console.log(run.status, run.result);
