import { type Question, RatchetApiError, type Run } from '../client/index.js';
import { isSessionId, sessionIdOfRun } from '../workflows/index.js';
import { ApiUnreachableError, apiFailure } from './cli-client.js';
import { CliError } from './cli-error.js';
import type { ApiTarget } from './command-line.js';
import type { ProcessIo } from './process-io.js';
import { parseAnswer } from './question-answers.js';
import { remoteApi } from './remote-api.js';
import { type RunHistoryEntry, readRunHistory, runHistoryPath } from './run-history.js';
import { describeRun } from './run-status.js';
import { printable } from './terminal.js';

/** How many of the remembered runs `ratchet runs` shows (the newest). */
const runsShown = 20;

/** `ratchet status RUN_ID`: the run's state; exit 0 when the API answered. */
export async function statusCommand(options: { runId: string } & ApiTarget, io: ProcessIo): Promise<number> {
  const { client } = remoteApi(options, io, { runId: options.runId });
  const run = await client.get(options.runId);
  io.stdout.write(`${describeRun(run).join('\n')}\n`);
  return 0;
}

/** `ratchet cancel RUN_ID`: asks the API to cancel; the run stops at its next step boundary. */
export async function cancelCommand(
  options: { runId: string; reason: string | undefined } & ApiTarget,
  io: ProcessIo,
): Promise<number> {
  const { client } = remoteApi(options, io, { runId: options.runId });
  await client.cancel(options.runId, { reason: options.reason ?? 'cancelled with ratchet cancel' });
  io.stdout.write(`cancelling run ${options.runId}: it stops at its next step (ratchet status shows it)\n`);
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
  const target = questionTarget(options.id);
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
function questionTarget(id: string): QuestionTarget {
  if (isSessionId(id)) return { sessionId: id, runId: undefined, questionId: undefined };
  const runId = /^q-(run_[0-9a-z]{16}_[0-9a-z]{10})-/.exec(id)?.[1] ?? id;
  const sessionId = sessionIdOfRun(runId);
  if (sessionId === undefined) {
    throw new CliError(
      `answer: "${id}" is not a question, run or session id (q-run_…, run_…, ses_…; ratchet status RUN_ID shows the question)`,
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

/**
 * `ratchet runs`: the runs `ratchet run` started from this directory (newest first), each with its status
 * now. `--session ID`: that session's active run and the remembered runs of it. (The API has no list of runs
 * yet: this is the CLI's own history, in .ratchet/runs.jsonl.)
 */
export async function runsCommand(
  options: { session: string | undefined } & ApiTarget,
  io: ProcessIo,
): Promise<number> {
  const path = runHistoryPath();
  const history = readRunHistory(path).reverse();
  const out = (line: string) => io.stdout.write(`${line}\n`);
  let entries: { runId: string; remembered: RunHistoryEntry | undefined }[];
  if (options.session !== undefined) {
    const { client } = remoteApi(options, io);
    const session = await client.session(options.session);
    out(`session ${session.id} (agent ${printable(session.agent)}, ${session.status})`);
    const remembered = history.filter((entry) => entry.session_id === session.id);
    entries = remembered.map((entry) => ({ runId: entry.run_id, remembered: entry }));
    if (
      session.active_run_id !== null &&
      !remembered.some((entry) => entry.run_id === session.active_run_id)
    ) {
      entries.unshift({ runId: session.active_run_id, remembered: undefined });
    }
  } else {
    entries = history.map((entry) => ({ runId: entry.run_id, remembered: entry }));
  }
  if (entries.length === 0) {
    out(
      options.session === undefined
        ? `no runs started from this directory yet (${path}); ratchet runs --session ID lists a session's`
        : 'no active run, and none of its runs was started from this directory',
    );
    return 0;
  }
  const shown = entries.slice(0, runsShown);
  const rows = await Promise.all(
    shown.map(async ({ runId, remembered }) => {
      // The API it was started on, unless --url or RATCHET_URL says otherwise.
      const { client } = remoteApi(options, io, remembered ? { url: remembered.url } : {});
      let status: string;
      let run: Run | undefined;
      try {
        run = await client.get(runId);
        status = run.pending_question ? `${run.status} (question)` : run.status;
      } catch (error) {
        if (apiFailure(error) === undefined) throw error;
        if (error instanceof RatchetApiError) status = error.status === 404 ? 'gone' : error.code;
        else status = error instanceof ApiUnreachableError ? 'unreachable' : 'unreadable';
      }
      return {
        runId,
        status,
        agent: run?.agent ?? remembered?.agent ?? '',
        started: remembered?.started_at.replace(/\.\d+Z$/, 'Z') ?? run?.created_at ?? '',
        task: remembered?.task ?? '',
      };
    }),
  );
  const width = (pick: (row: (typeof rows)[number]) => string, title: string) =>
    Math.max(title.length, ...rows.map((row) => pick(row).length));
  const statusWidth = width((row) => row.status, 'STATUS');
  const agentWidth = width((row) => row.agent, 'AGENT');
  const runWidth = width((row) => row.runId, 'RUN');
  out(
    `${'RUN'.padEnd(runWidth)}  ${'STATUS'.padEnd(statusWidth)}  ${'AGENT'.padEnd(agentWidth)}  STARTED               TASK`,
  );
  for (const row of rows) {
    out(
      `${row.runId.padEnd(runWidth)}  ${row.status.padEnd(statusWidth)}  ${printable(row.agent).padEnd(agentWidth)}  ${row.started.padEnd(20)}  ${printable(row.task.replace(/\s+/g, ' '))}`,
    );
  }
  if (entries.length > shown.length) out(`(${entries.length - shown.length} older runs in ${path})`);
  if (rows.some((row) => row.status === 'unreachable')) {
    out('unreachable: no API answers where the run was started; give --url (or RATCHET_URL)');
  }
  return 0;
}
