import { describe, expect, it } from 'vitest';
import { createTreeRenderer, describeAnswer, progressBar, renderEvent } from '../../src/cli/render-event.js';
import { printable } from '../../src/cli/terminal.js';
import { buildEvent, type EventData, type RatchetEvent } from '../../src/events/event.js';

const run = { id: 'run_x', agent: 'assistant' };
const time = '2024-05-01T12:00:00.000Z';

function event<Kind extends Parameters<typeof buildEvent>[0]>(
  kind: Kind,
  data: EventData<Kind>,
): RatchetEvent {
  return { ...buildEvent(kind, run, data, time), id: '1-0' } as RatchetEvent;
}

describe('renderEvent', () => {
  it('shows a question with its numbered options', () => {
    const line = renderEvent(
      event('ask_user', {
        question_id: 'q1',
        kind: 'ask_user',
        question: 'Digits or words?',
        options: ['digits', 'words'],
        tool: null,
        timeout_at: null,
      }),
    );
    expect(line).toBe('❓ assistant asks: Digits or words?\n     1) digits  2) words');
  });

  it('shows a tool call awaiting approval with its arguments', () => {
    const line = renderEvent(
      event('ask_user', {
        question_id: 'q1',
        kind: 'approval',
        question: 'Run charge_card?',
        options: ['approve', 'reject'],
        tool: { name: 'charge_card', tool_call_id: 'c1', arguments: '{"amount":5}' },
        timeout_at: null,
      }),
    );
    expect(line).toBe('❓ assistant wants to run charge_card({"amount":5}): approve?');
  });

  it('shows answers, also those given by a timeout', () => {
    expect(
      renderEvent(event('question_answered', { question_id: 'q1', answered_by: 'user', answer: 'words' })),
    ).toBe('  ↳ answered: words');
    expect(
      renderEvent(
        event('question_answered', { question_id: 'q1', answered_by: 'timeout', answer: 'digits' }),
      ),
    ).toBe('  ↳ answered (timed out: default answer): digits');
  });

  it('shows progress as a bar when it has a fraction', () => {
    expect(renderEvent(event('progress', { fraction: 0.5, message: 'half way' }))).toBe(
      `  ⏳ [${'█'.repeat(12)}${'░'.repeat(12)}]  50% half way`,
    );
    expect(renderEvent(event('progress', { fraction: null, message: 'thinking' }))).toBe('  ⏳ thinking');
  });

  it("draws a supervisor's sub-goals under the bar, one line each", () => {
    const statuses = ['completed', 'in_progress', 'pending', 'failed'] as const;
    const rendered = renderEvent(
      event('progress', {
        fraction: 0.25,
        message: '1 of 4 sub-goals completed',
        sub_goals: statuses.map((status, index) => ({ id: `g${index}`, title: status, status })),
        warning: 'the last 1 were cut (g4)',
      }),
    );
    expect(rendered?.split('\n')).toEqual([
      `  ⏳ [${'█'.repeat(6)}${'░'.repeat(18)}]  25% 1 of 4 sub-goals completed`,
      '    [✓] g0: completed',
      '    [→] g1: in_progress',
      '    [ ] g2: pending',
      '    [✗] g3: failed',
      '    ⚠ the last 1 were cut (g4)',
    ]);
  });
});

describe('renderEvent: effects', () => {
  it('shows a compaction with its reason and the tokens before and after', () => {
    expect(
      renderEvent(
        event('compaction', {
          iteration: 7,
          up_to: 12,
          tokens_before: 25_000,
          tokens_after: 3_000,
          reason: 'threshold',
        }),
      ),
    ).toBe('  🗜 context compacted (threshold reached): 25000 → 3000 tokens');
    expect(
      renderEvent(
        event('compaction', {
          iteration: 7,
          up_to: 12,
          tokens_before: 9_000,
          tokens_after: 1_000,
          reason: 'context_length_error',
        }),
      ),
    ).toContain('the model refused a request as too long');
  });

  it('shows a detected loop and a reflection prompt', () => {
    expect(
      renderEvent(
        event('loop_detected', { iteration: 4, tool: 'add', arguments: '{"a":1}', count: 3, window_size: 6 }),
      ),
    ).toBe('  ↻ loop: add({"a":1}) called 3 times in the last 6 calls; the model was told');
    expect(renderEvent(event('reflection', { iteration: 3, failures: 2 }))).toBe(
      '  💭 2 failed tool calls in a row; the model was asked to reflect',
    );
  });
});

describe('progressBar', () => {
  it('fills in proportion and clamps to 0..100 %', () => {
    expect(progressBar(0)).toBe(`⏳ [${'░'.repeat(24)}]   0%`);
    expect(progressBar(1)).toBe(`⏳ [${'█'.repeat(24)}] 100%`);
    expect(progressBar(1.7)).toBe(progressBar(1));
    expect(progressBar(-1)).toBe(progressBar(0));
    expect(progressBar(null)).toBe('⏳');
  });
});

describe('describeAnswer', () => {
  it('shows text as is and approvals as decisions', () => {
    expect(describeAnswer('yes')).toBe('yes');
    expect(describeAnswer({ decision: 'approve' })).toBe('approved');
    expect(describeAnswer({ decision: 'approve', arguments: { a: 1 } })).toBe('approved with {"a":1}');
    expect(describeAnswer({ decision: 'reject', reason: 'no' })).toBe('rejected: no');
    expect(describeAnswer({ decision: 'reject' })).toBe('rejected');
  });
});

describe('renderEvent: tool calls', () => {
  const start = (name: string) =>
    renderEvent(event('tool_call_start', { iteration: 1, tool_call_id: 'c1', name, arguments: '{"a":1}' }));
  const end = (name: string, isError: boolean) =>
    renderEvent(
      event('tool_call_end', {
        iteration: 1,
        tool_call_id: 'c1',
        name,
        is_error: isError,
        content: 'out',
      }),
    );

  it('shows calls and results of tools', () => {
    expect(start('calculate')).toBe('  🔧 calculate({"a":1})');
    expect(end('calculate', false)).toBe('  ✓ calculate → out');
    expect(end('calculate', true)).toBe('  ✗ calculate → out');
  });

  it('leaves ask_user and report_progress to their question and progress lines, unless they fail', () => {
    expect(start('ask_user')).toBeUndefined();
    expect(end('ask_user', false)).toBeUndefined();
    expect(start('report_progress')).toBeUndefined();
    expect(end('report_progress', true)).toBe('  ✗ report_progress → out');
  });

  it('shows a reply by its text; a reply of tool calls only has no line of its own', () => {
    const reply = (text: string) =>
      renderEvent(
        event('message_added', {
          chat_id: 'main',
          index: 1,
          message: {
            id: 'm1',
            sender: 'assistant',
            metadata: {},
            created_at: time,
            role: 'assistant',
            parts: [
              ...(text === '' ? [] : [{ type: 'text' as const, text }]),
              { type: 'tool_call' as const, id: 'c1', name: 'calculate', arguments: '{}' },
            ],
          },
        }),
      );
    expect(reply('Let me see.')).toBe('🤖 assistant: Let me see.');
    expect(reply('')).toBeUndefined();
  });
});

describe('createTreeRenderer', () => {
  const at = (kind: string, runId: string, agent: string, data: unknown) =>
    ({ id: '1-0', v: 1, kind, run_id: runId, agent, time: '2024-01-01T00:00:00.000Z', data }) as RatchetEvent;

  it('indents the runs below the followed one by depth, with their prefix', () => {
    const render = createTreeRenderer('run_root');
    const lines = [
      at('run_started', 'run_root', 'lead', { input: 'go' }),
      at('agent_start', 'run_root', 'lead', { parent_run_id: null, depth: 0, prefix: '🧭' }),
      at('run_started', 'run_child', 'helper', { input: 'the task' }),
      at('agent_start', 'run_child', 'helper', { parent_run_id: 'run_root', depth: 1, prefix: '🔎' }),
      at('message_added', 'run_child', 'helper', {
        chat_id: 'c',
        index: 1,
        message: {
          id: 'm',
          sender: 'helper',
          role: 'assistant',
          parts: [{ type: 'text', text: 'found it' }],
          metadata: {},
          created_at: '2024-01-01T00:00:00.000Z',
        },
      }),
      at('message_added', 'run_root', 'lead', {
        chat_id: 'main',
        index: 3,
        message: {
          id: 'n',
          sender: 'lead',
          role: 'assistant',
          parts: [{ type: 'text', text: 'done' }],
          metadata: {},
          created_at: '2024-01-01T00:00:00.000Z',
        },
      }),
    ].map(render);
    expect(lines).toEqual([
      '▶ lead starts: go',
      undefined,
      undefined,
      '    ↳ 🔎 helper starts: the task',
      '    🔎 helper: found it',
      '🧭 lead: done',
    ]);
  });
});

describe('printable', () => {
  it('keeps text, newlines and tabs, and shows every control character and bidi override as a symbol', () => {
    expect(printable('plain, emoji 🦉, accents é\n\tindented')).toBe(
      'plain, emoji 🦉, accents é\n\tindented',
    );
    expect(printable('\u001b[31mred\u001b[0m \u0007\u0000 \u009b \u202e \u2066 \r')).toBe(
      '␛[31mred␛[0m ␇␀ \ufffd \ufffd \ufffd ␍',
    );
  });
});

describe('a rejected final answer', () => {
  const at = (kind: string, data: unknown) =>
    ({ id: '1-0', v: 1, kind, run_id: 'run_root', agent: 'writer', time, data }) as RatchetEvent;
  const reply = (iteration: number, role: 'assistant' | 'user', text: string) =>
    at('message_added', {
      chat_id: 'main',
      index: iteration,
      message: {
        id: `m${iteration}${role}`,
        sender: role === 'user' ? 'guardrail' : 'writer',
        role,
        parts: [{ type: 'text', text }],
        metadata: { iteration },
        created_at: time,
      },
    });

  it('is shown as rejected, with the check, the retry count and the reason', () => {
    const rejected = { iteration: 1, reason: 'the answer matches the denied pattern /secret/', retry: 1 };
    expect(
      renderEvent(event('answer_rejected', { ...rejected, check: 'output_guardrail', max_retries: 2 })),
    ).toBe(
      '  ✗ answer rejected by the output guardrail (1/2): the answer matches the denied pattern /secret/',
    );
    expect(
      renderEvent(event('answer_rejected', { ...rejected, check: 'options.output_schema', max_retries: 3 })),
    ).toBe(
      '  ✗ answer rejected by options.output_schema (1/3): the answer matches the denied pattern /secret/',
    );
  });

  it('is not printed like an answer by the run view; the answer that passes is', () => {
    const render = createTreeRenderer('run_root');
    const lines = [
      at('run_started', { input: 'go' }),
      at('answer_rejected', {
        iteration: 1,
        check: 'output_guardrail',
        reason: 'the answer matches the denied pattern /secret/',
        retry: 1,
        max_retries: 2,
      }),
      reply(1, 'assistant', 'the secret is 42'),
      reply(1, 'user', 'Your answer was not accepted: ...'),
      reply(2, 'assistant', 'I cannot say'),
    ].map(render);
    expect(lines.filter((line) => line !== undefined)).toEqual([
      '▶ writer starts: go',
      '  ✗ answer rejected by the output guardrail (1/2): the answer matches the denied pattern /secret/',
      '    ↳ rejected answer: the secret is 42',
      '🤖 writer: I cannot say',
    ]);
  });
});
