import { setTimeout as sleep } from 'node:timers/promises';
import { RatchetApiError, RatchetResponseError } from '../client/index.js';
import type { QuestionResponse } from '../workflows/index.js';
import { apiFailure } from './cli-client.js';
import { type AskedQuestion, defaultAnswer, parseAnswer, promptFor } from './question-answers.js';
import type { Terminal } from './terminal.js';

export interface QuestionAskerOptions {
  terminal: Terminal;
  /** Sends an answer; rejects with a RatchetApiError when the API refuses it. */
  respond: (question: AskedQuestion, response: QuestionResponse) => Promise<unknown>;
}

const takenAway = Symbol('prompt taken away');
const withdrawn = Symbol('withdrawn');

/**
 * Asks the open questions at the prompt, one at a time in the order they came, and sends the answers.
 * A question answered elsewhere (another client, its timeout) is withdrawn from the prompt.
 */
export class QuestionAsker {
  private readonly open = new Map<string, AskedQuestion>();
  private readonly closed = new Set<string>();
  private current: { questionId: string; controller: AbortController } | undefined;
  private paused = false;
  private wake: () => void = () => {};
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(private readonly options: QuestionAskerOptions) {
    this.loop = this.run();
  }

  /** A question from an ask_user event. */
  add(question: AskedQuestion): void {
    if (this.closed.has(question.question_id) || this.open.has(question.question_id)) return;
    this.open.set(question.question_id, question);
    this.wake();
  }

  /** The question was answered (a question_answered event): it leaves the prompt if it is on it. */
  withdraw(questionId: string): void {
    this.closed.add(questionId);
    this.open.delete(questionId);
    if (this.current?.questionId === questionId) this.current.controller.abort(withdrawn);
  }

  /** Takes the prompt away until `resume` (for the Ctrl-C question); the open question is asked again. */
  pause(): () => void {
    this.paused = true;
    this.current?.controller.abort(takenAway);
    return () => {
      this.paused = false;
      this.wake();
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.controller.abort(takenAway);
    this.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const question = this.open.values().next().value;
      if (question === undefined || this.paused) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        continue;
      }
      const response = await this.read(question);
      if (response === undefined) continue;
      await this.send(question, response);
    }
  }

  /** The answer typed (or the default at the end of input); undefined when the prompt was taken away. */
  private async read(question: AskedQuestion): Promise<QuestionResponse | undefined> {
    const { terminal } = this.options;
    const controller = new AbortController();
    this.current = { questionId: question.question_id, controller };
    let line: string | undefined;
    try {
      line = await terminal.ask(promptFor(question), controller.signal);
    } catch (reason) {
      if (reason === withdrawn) terminal.print('  (answered elsewhere)');
      return undefined;
    } finally {
      this.current = undefined;
    }
    if (line === undefined) {
      const fallback = defaultAnswer(question);
      terminal.print(`  (end of input: answering "${fallback.shown}")`);
      return fallback.response;
    }
    const parsed = parseAnswer(question, line);
    if (parsed.status === 'again') {
      if (parsed.problem) terminal.print(`  ${parsed.problem}`);
      return undefined;
    }
    return parsed.response;
  }

  private async send(question: AskedQuestion, response: QuestionResponse): Promise<void> {
    const { terminal } = this.options;
    for (let attempt = 1; !this.stopped && this.open.has(question.question_id); attempt += 1) {
      try {
        await this.options.respond(question, response);
        this.withdraw(question.question_id);
        return;
      } catch (error) {
        const failure = apiFailure(error);
        if (failure === undefined) throw error;
        if (error instanceof RatchetResponseError) {
          // A success answer, if one we cannot read: the answer was taken.
          this.withdraw(question.question_id);
          return;
        }
        // No answer at all (unreachable, timed out) is status 0: tried again, as a 5xx is.
        const status = error instanceof RatchetApiError ? error.status : 0;
        const message = error instanceof RatchetApiError ? error.message : failure;
        if (status === 404 || status === 409) {
          terminal.print(`  (not sent: ${message})`);
          this.withdraw(question.question_id);
          return;
        }
        if (status === 400 && !terminal.atEnd) {
          // The answer does not fit (edited arguments that fail the tool's schema, …): ask again.
          terminal.print(`  ${message}`);
          return;
        }
        if (attempt >= 5 || (status >= 400 && status < 500)) {
          terminal.print(`  could not send the answer: ${message}`);
          this.withdraw(question.question_id);
          return;
        }
        await sleep(500 * attempt);
      }
    }
  }
}
