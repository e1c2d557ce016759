import { createHash, randomBytes } from 'node:crypto';

const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';

function randomToken(length: number): string {
  const bytes = randomBytes(length);
  let token = '';
  for (const byte of bytes) token += alphabet[byte % 32];
  return token;
}

/** `ses_<16>`: random. */
export function newSessionId(): string {
  return `ses_${randomToken(16)}`;
}

const sessionIdPattern = /^ses_([0-9a-z]{16})$/;
const runIdPattern = /^run_([0-9a-z]{16})_[0-9a-z]{10}$/;

export function isSessionId(value: string): boolean {
  return sessionIdPattern.test(value);
}

/**
 * `run_<session part>_<10>`: random, and carrying its session, so a run's keys (which live in its session's
 * shard) are found from the run id alone, without an index outside the shard.
 */
export function newRunId(sessionId: string): string {
  const match = sessionIdPattern.exec(sessionId);
  if (!match) throw new Error(`not a session id: ${sessionId}`);
  return `run_${match[1]}_${randomToken(10)}`;
}

/**
 * The run id of the `index`-th child that the step job `parentJobId` starts: the same every time the step runs,
 * so a step that runs again finds its children instead of starting new ones.
 */
export function childRunId(sessionId: string, parentJobId: string, index: number): string {
  const match = sessionIdPattern.exec(sessionId);
  if (!match) throw new Error(`not a session id: ${sessionId}`);
  const digest = createHash('sha256').update(`${parentJobId}/${index}`).digest();
  let token = '';
  for (const byte of digest.subarray(0, 10)) token += alphabet[byte % 32];
  return `run_${match[1]}_${token}`;
}

/**
 * The session and run a trigger starts for an event (decision 0033): derived from the trigger and the event
 * id, so every copy of the event names the same run and only the first creates it.
 */
export function triggeredRunIds(triggerKey: string): { sessionId: string; runId: string } {
  const digest = createHash('sha256').update(`trigger/${triggerKey}`).digest();
  let session = '';
  for (const byte of digest.subarray(0, 16)) session += alphabet[byte % 32];
  let run = '';
  for (const byte of digest.subarray(16, 26)) run += alphabet[byte % 32];
  return { sessionId: `ses_${session}`, runId: `run_${session}_${run}` };
}

/** `msg_<10>`: a message sent to a busy session (queued or steered), random. */
export function newPendingMessageId(): string {
  return `msg_${randomToken(10)}`;
}

const pendingMessageIdPattern = /^msg_([0-9a-z]{10})$/;

export function isPendingMessageId(value: string): boolean {
  return pendingMessageIdPattern.test(value);
}

/**
 * The run a queued message starts: derived from the message id, so every attempt to start it (a worker that
 * died after its commit, another worker's sweep) names the same run, and create-run makes it once.
 */
export function runIdOfPendingMessage(sessionId: string, pendingMessageId: string): string {
  const session = sessionIdPattern.exec(sessionId);
  const message = pendingMessageIdPattern.exec(pendingMessageId);
  if (!session || !message)
    throw new Error(`not a session id and a message id: ${sessionId} ${pendingMessageId}`);
  return `run_${session[1]}_${message[1]}`;
}

/** The session of a run id, or undefined when the text is not a run id. */
export function sessionIdOfRun(runId: string): string | undefined {
  const match = runIdPattern.exec(runId);
  return match ? `ses_${match[1]}` : undefined;
}

/** Deterministic step job ids: re-adding a step that exists is a no-op. */
export const stepJobId = {
  iteration: (runId: string, iteration: number) => `${runId}-i${iteration}`,
  tool: (runId: string, iteration: number, index: number) => `${runId}-i${iteration}-t${index}`,
};

/** Deterministic message ids: a step computes the same ids every time it runs. */
export const messageId = {
  input: (runId: string) => `${runId}-in`,
  reply: (runId: string, iteration: number) => `${runId}-i${iteration}-a`,
  /** Why the output guardrail sent iteration n's answer back. */
  guardrailFeedback: (runId: string, iteration: number) => `${runId}-i${iteration}-g`,
  toolResult: (runId: string, iteration: number, index: number) => `${runId}-i${iteration}-r${index}`,
  /** The `index`-th message steered into the run before iteration n's model call. */
  steered: (runId: string, iteration: number, index: number) => `${runId}-i${iteration}-s${index}`,
  /** The person's answer to the question an effect asked after iteration n's reply (decision 0049). */
  effectAnswer: (runId: string, iteration: number) => `${runId}-i${iteration}-q`,
  /** A message an effect adds before iteration n's model call (one per effect kind and iteration). */
  effect: (runId: string, iteration: number, kind: string) => `${runId}-i${iteration}-e-${kind}`,
  /** The summary the model is sent in place of the chat entries before `upTo` (never in the chat). */
  summary: (runId: string, upTo: number) => `${runId}-summary-${upTo}`,
};

/** Deterministic question ids: a step that asks again asks the same question. */
export const questionIdOf = {
  ask: (toolJobId: string, sequence: number) => `q-${toolJobId}-${sequence}`,
  approval: (toolJobId: string) => `q-${toolJobId}-approval`,
  budget: (iterationJobId: string, raises: number) => `q-${iterationJobId}-budget-${raises}`,
  /** The question an effect's after phase asked about the previous reply, asked by the next iteration. */
  effect: (iterationJobId: string) => `q-${iterationJobId}-effect`,
};

/**
 * The session and run a schedule's fire starts: derived from the schedule (its id and when it was created,
 * so a schedule deleted and made again starts afresh) and the fire time, so a fire taken up twice, by any
 * number of processes, finds the run it started instead of starting another (decision 0036).
 */
export function scheduledRunIds(
  scheduleId: string,
  createdAt: string,
  fireAtMs: number,
): { sessionId: string; runId: string } {
  const digest = createHash('sha256').update(`schedule/${scheduleId}/${createdAt}/${fireAtMs}`).digest();
  let session = '';
  for (const byte of digest.subarray(0, 16)) session += alphabet[byte % 32];
  let run = '';
  for (const byte of digest.subarray(16, 26)) run += alphabet[byte % 32];
  return { sessionId: `ses_${session}`, runId: `run_${session}_${run}` };
}
