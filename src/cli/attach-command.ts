import type { ApiTarget } from './command-line.js';
import { exitTerminated, followRun, reportOutcome } from './follow-run.js';
import type { ProcessIo } from './process-io.js';
import type { AskedQuestion } from './question-answers.js';
import { remoteApi } from './remote-api.js';
import { finishedStatuses } from './run-status.js';
import { printable, Terminal } from './terminal.js';

/**
 * `ratchet attach RUN_ID`: follows a run that is already going (after the terminal that started it closed):
 * its session's events so far, then live, and the questions still waiting at the prompt, as `ratchet run`
 * does. Exit codes as `run`: 0 completed, 1 failed or cancelled, 130 Ctrl-C (143 SIGTERM; the run goes on).
 */
export async function attachCommand(options: { runId: string } & ApiTarget, io: ProcessIo): Promise<number> {
  const api = remoteApi(options, io, { runId: options.runId });
  const { url, client } = api;
  const run = await client.get(options.runId);
  const terminal = new Terminal({ input: io.stdin, output: io.stdout, interactive: io.stdin.isTTY === true });
  let leave: (code: number) => void = () => {};
  const leaving = new Promise<number>((resolve) => {
    leave = resolve;
  });
  const removeTerminationHandler = io.terminations.on(() => leave(exitTerminated));
  try {
    terminal.print(`run ${run.id} (session ${run.session_id}) on ${url}: ${run.status}`);
    if (finishedStatuses.has(run.status)) {
      if (run.result !== undefined && run.result !== null) terminal.print(`\nanswer: ${run.result}`);
      if (run.error) io.stderr.write(`${run.error.code}: ${printable(run.error.message)}\n`);
      return run.status === 'completed' ? 0 : 1;
    }
    const follow = async (): Promise<number> => {
      const outcome = await followRun({
        api,
        terminal,
        runId: run.id,
        sessionId: run.session_id,
        interrupts: io.interrupts,
        pendingQuestions: async () => (await client.questions(run.session_id)).map(askedQuestion),
      });
      return reportOutcome(outcome, { runId: run.id, terminal, io, inProcessConfig: undefined });
    };
    return await Promise.race([follow(), leaving]);
  } finally {
    removeTerminationHandler();
    terminal.close();
  }
}

function askedQuestion(question: {
  id: string;
  kind: AskedQuestion['kind'];
  question: string;
  options: string[];
  tool: AskedQuestion['tool'];
  timeout_at: string | null;
}): AskedQuestion {
  const { id, kind, options, tool } = question;
  return {
    question_id: id,
    kind,
    question: question.question,
    options,
    tool,
    timeout_at: question.timeout_at,
  };
}
