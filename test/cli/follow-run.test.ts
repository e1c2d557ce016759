import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { type FollowedApi, followRun } from '../../src/cli/follow-run.js';
import { Terminal } from '../../src/cli/terminal.js';
import type { RatchetClientEvent } from '../../src/client/index.js';
import { type EventData, type EventKind, runEndKinds } from '../../src/events/event.js';
import type { QuestionResponse } from '../../src/workflows/question-record.js';

const runId = 'run_a_1';
const sessionId = 'ses_a';
const usage = { input_tokens: 1, output_tokens: 1, cached_input_tokens: 0, requests: 1 };
const question: EventData<'ask_user'> = {
  question_id: 'q1',
  kind: 'ask_user',
  question: 'Digits or words?',
  options: ['digits', 'words'],
  tool: null,
  timeout_at: null,
};

/** An API that streams what the test pushes and records what the CLI sends. */
function fakeApi() {
  const events: RatchetClientEvent[] = [];
  let wake: () => void = () => {};
  const responses: { questionId: string; response: QuestionResponse }[] = [];
  const cancels: string[] = [];
  let sequence = 0;
  const push = <Kind extends EventKind>(kind: Kind, data: EventData<Kind>, run = runId) => {
    sequence += 1;
    const id = `${sequence}-0`;
    const event = { id, kind, run_id: run, agent: 'assistant', time: '2024-05-01T12:00:00.000Z', data };
    events.push(event as RatchetClientEvent);
    wake();
  };
  const client = {
    cancel: async (id: string) => {
      cancels.push(id);
      push('run_cancelled', { reason: 'cancelled by request' });
    },
    answer: async (_session: string, questionId: string, response: QuestionResponse) => {
      responses.push({ questionId, response });
      push('question_answered', { question_id: questionId, answered_by: 'user', answer: response });
      push('run_completed', { result: `you said ${JSON.stringify(response)}`, usage, iterations: 2 });
      return { session_id: sessionId, question_id: questionId };
    },
    // As RatchetClient.events: every event once, until the signal or the run's terminal event.
    async *events(_session: string, options: { signal?: AbortSignal; untilRunEnds?: string } = {}) {
      let next = 0;
      while (!options.signal?.aborted) {
        while (next < events.length) {
          const event = events[next++];
          if (!event) continue;
          yield event;
          if (event.run_id === options.untilRunEnds && runEndKinds.includes(event.kind)) return;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          options.signal?.addEventListener('abort', () => resolve(), { once: true });
        });
      }
    },
  };
  const api = { client, onStreamLost: () => () => {} } as unknown as FollowedApi;
  return { api, push, responses, cancels };
}

function interrupts() {
  let handler: (() => void) | undefined;
  return {
    on(next: () => void) {
      handler = next;
      return () => {
        handler = undefined;
      };
    },
    fire: () => handler?.(),
  };
}

const terminals: Terminal[] = [];
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.close();
});

function terminal(interactive: boolean) {
  const input = new PassThrough();
  const output = new PassThrough();
  let text = '';
  output.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const created = new Terminal({ input, output, interactive });
  terminals.push(created);
  return { terminal: created, input, output: () => text };
}

/** Follows the test run through the fake API. */
function follow(api: ReturnType<typeof fakeApi>, term: Terminal, signals = interrupts()) {
  return followRun({ api: api.api, terminal: term, runId, sessionId, interrupts: signals });
}

async function until(condition: () => boolean): Promise<void> {
  for (let tries = 0; !condition(); tries += 1) {
    if (tries > 200) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('followRun', () => {
  it('answers a question with a line from the pipe (a number picks the option) and returns the result', async () => {
    const api = fakeApi();
    const { terminal: term, input, output } = terminal(false);
    input.write('2\n');
    api.push('run_started', { input: 'task' });
    api.push('ask_user', question);
    const outcome = await follow(api, term);
    expect(outcome).toEqual({ status: 'completed', result: 'you said "words"' });
    expect(api.responses).toEqual([{ questionId: 'q1', response: 'words' }]);
    expect(output()).toContain('❓ assistant asks: Digits or words?');
    expect(output()).toContain('  your answer (1-2 or text, Enter for "digits"): 2\n');
    expect(output()).toContain('  ↳ answered: words');
  });

  it('answers with the first option when stdin has ended', async () => {
    const api = fakeApi();
    const { terminal: term, input, output } = terminal(false);
    input.end();
    api.push('ask_user', question);
    const outcome = await follow(api, term);
    expect(outcome.status).toBe('completed');
    expect(api.responses).toEqual([{ questionId: 'q1', response: 'digits' }]);
    expect(output()).toContain('(end of input: answering "digits")');
  });

  it('withdraws a question answered elsewhere and asks the next one', async () => {
    const api = fakeApi();
    const { terminal: term, input, output } = terminal(false);
    api.push('ask_user', question);
    const following = follow(api, term);
    await until(() => output().includes('your answer'));
    api.push('question_answered', { question_id: 'q1', answered_by: 'timeout', answer: 'digits' });
    api.push('ask_user', { ...question, question_id: 'q2', question: 'Sure?', options: [] });
    await until(() => output().includes('(answered elsewhere)'));
    input.write('quite\n');
    expect(await following).toEqual({ status: 'completed', result: 'you said "quite"' });
    expect(api.responses).toEqual([{ questionId: 'q2', response: 'quite' }]);
  });

  it('ends with the run: failed and cancelled runs, other runs of the session do not end it', async () => {
    const api = fakeApi();
    const { terminal: term } = terminal(false);
    api.push('run_failed', { error: { code: 'x', message: 'other run' }, usage, iterations: 1 }, 'run_a_0');
    api.push('run_failed', { error: { code: 'max_iterations', message: 'gave up' }, usage, iterations: 8 });
    expect(await follow(api, term)).toEqual({ status: 'failed', message: 'gave up' });
  });

  it('cancels the run on SIGINT without asking when stdin is not a terminal', async () => {
    const api = fakeApi();
    const { terminal: term, output } = terminal(false);
    const signals = interrupts();
    api.push('run_started', { input: 'task' });
    const following = follow(api, term, signals);
    await until(() => output().includes('starts'));
    signals.fire();
    expect(await following).toEqual({ status: 'interrupted', cancelled: true });
    expect(api.cancels).toEqual([runId]);
  });

  it('at a terminal, Ctrl-C asks whether to cancel: "n" goes on with the question, "y" cancels', async () => {
    const api = fakeApi();
    const { terminal: term, input, output } = terminal(true);
    api.push('ask_user', question);
    const following = follow(api, term);
    await until(() => output().includes('your answer'));
    input.write('\x03');
    await until(() => output().includes('cancel the run? [y/N] '));
    input.write('n\r');
    await until(() => output().split('your answer').length > 2);
    input.write('\x03');
    await until(() => output().split('cancel the run?').length > 2);
    input.write('y\r');
    expect(await following).toEqual({ status: 'interrupted', cancelled: true });
    expect(api.cancels).toEqual([runId]);
    expect(api.responses).toEqual([]);
  });

  it('at a terminal, a second Ctrl-C at the confirmation leaves without cancelling', async () => {
    const api = fakeApi();
    const { terminal: term, input, output } = terminal(true);
    api.push('run_started', { input: 'task' });
    const following = follow(api, term);
    await until(() => output().includes('starts'));
    input.write('\x03');
    await until(() => output().includes('cancel the run?'));
    input.write('\x03');
    expect(await following).toEqual({ status: 'interrupted', cancelled: false });
    expect(api.cancels).toEqual([]);
  });
});
