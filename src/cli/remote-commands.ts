import type { Question } from '../client/index.js';
import { isSessionId, sessionIdOfRun } from '../workflows/index.js';
import { CliError } from './cli-error.js';
import type { ApiTarget } from './command-line.js';
import type { Invocation } from './invocation.js';
import type { ProcessIo } from './process-io.js';
import { parseAnswer } from './question-answers.js';
import { remoteApi } from './remote-api.js';
import { describeRun } from './run-status.js';
import { printable } from './terminal.js';

/** `ratchet status RUN_ID`: the run's state; exit 0 when the API answered. */
export async function statusCommand(options: { runId: string } & ApiTarget, io: ProcessIo): Promise<number> {
  const { client } = remoteApi(options, io, { runId: options.runId });
  const run = await client.get(options.runId);
  io.stdout.write(`${describeRun(run, io.invocation).join('\n')}\n`);
  return 0;
}

/** `ratchet cancel RUN_ID`: asks the API to cancel; the run stops at its next step boundary. */
export async function cancelCommand(
  options: { runId: string; reason: string | undefined } & ApiTarget,
  io: ProcessIo,
): Promise<number> {
  const { client } = remoteApi(options, io, { runId: options.runId });
  await client.cancel(options.runId, { reason: options.reason ?? 'cancelled with ratchet cancel' });
  io.stdout.write(
    `cancelling run ${options.runId}: it stops at its next step (${io.invocation} status ${options.runId} shows it)\n`,
  );
  return 0;
}

/**
 * `ratchet answer ID "text"`: answers one pending question without a prompt. ID is the question's id, or a
 * run or session with exactly one question waiting. The text is read as at the prompt: an option's number,
 * `approve` / `reject [reason]` for an approval.
 */
export async function answerCommand(
  options: { id: string; text: string } & ApiTarget,
  io: ProcessIo,
): Promise<number> {
  const target = questionTarget(options.id, io.invocation);
  const { client } = remoteApi(options, io, { runId: target.runId });
  const pending = await client.questions(target.sessionId);
  const candidates = pending.filter((question) => {
    if (target.questionId !== undefined) return question.id === target.questionId;
    // A run's question may be its own or one of its children's (a delegate asking): the session's.
    return true;
  });
  const question = pickQuestion(options.id, target, candidates);
  const parsed = parseAnswer(
    {
      question_id: question.id,
      kind: question.kind,
      question: question.question,
      options: question.options,
      tool: question.tool,
      timeout_at: question.timeout_at,
    },
    options.text,
  );
  if (parsed.status === 'again') {
    throw new CliError(
      `answer: ${parsed.problem ?? 'give the answer'} (question: ${printable(question.question)})`,
      2,
    );
  }
  await client.answer(question.session_id, question.id, parsed.response);
  io.stdout.write(`answered ${question.id} (run ${question.run_id}): ${printable(parsed.shown)}\n`);
  return 0;
}

interface QuestionTarget {
  sessionId: string;
  runId: string | undefined;
  questionId: string | undefined;
}

/** The session (and run, and question) an id names: question ids carry their run's id, and run ids their session's. */
function questionTarget(id: string, invocation: Invocation): QuestionTarget {
  if (isSessionId(id)) return { sessionId: id, runId: undefined, questionId: undefined };
  const runId = /^q-(run_[0-9a-z]{16}_[0-9a-z]{10})-/.exec(id)?.[1] ?? id;
  const sessionId = sessionIdOfRun(runId);
  if (sessionId === undefined) {
    throw new CliError(
      `answer: "${id}" is not a question, run or session id (q-run_…, run_…, ses_…; ${invocation} status RUN_ID shows the question)`,
      2,
    );
  }
  return { sessionId, runId, questionId: runId === id ? undefined : id };
}

function pickQuestion(id: string, target: QuestionTarget, candidates: Question[]): Question {
  const [only, ...others] = candidates;
  if (only === undefined) {
    throw new CliError(
      target.questionId === undefined
        ? `answer: no question is waiting in ${target.runId ? `run ${id}'s session` : `session ${id}`}`
        : `answer: question ${id} is not waiting (answered already, or its run has ended)`,
    );
  }
  if (others.length > 0) {
    const list = candidates
      .map((question) => `  ${question.id}  ${printable(question.agent)}: ${printable(question.question)}`)
      .join('\n');
    throw new CliError(
      `answer: ${candidates.length} questions are waiting; give the one you answer:\n${list}`,
      2,
    );
  }
  return only;
}
