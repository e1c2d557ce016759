import { textOf } from '../chat/index.js';
import type { EventData, RatchetEvent } from '../events/event.js';

const maxLine = 160;

/** Built-in tools whose own events (ask_user, question_answered, progress) show what they do. */
const interactionTools = new Set(['ask_user', 'report_progress']);

function cut(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > maxLine ? `${line.slice(0, maxLine - 1)}…` : line;
}

const goalMarks = { completed: '[✓]', in_progress: '[→]', pending: '[ ]', failed: '[✗]' } as const;

const fileMarks = { created: '+', modified: '~', deleted: '-' } as const;

/** A file change's diff stat: lines added and removed when known, and the size. */
function fileStat(data: EventData<'file_change'>): string {
  const lines = data.lines_added === undefined ? '' : `+${data.lines_added} -${data.lines_removed ?? 0}, `;
  const size = data.size === null ? `was ${data.size_before ?? 0} bytes` : `${data.size} bytes`;
  const more = data.more_changes === undefined ? '' : ` (and ${data.more_changes} more files)`;
  return ` (${lines}${size})${more}`;
}

/** One readable terminal line per event (or none, for events that another line already shows). */
export function renderEvent(event: RatchetEvent): string | undefined {
  switch (event.kind) {
    case 'run_started':
      return `▶ ${event.agent} starts: ${cut(event.data.input)}`;
    case 'message_added': {
      const { message } = event.data;
      if (message.role !== 'assistant') return undefined;
      // A team member's answer copied to the team's shared chat was shown by the member's own run.
      if (message.metadata.member_run_id !== undefined) return undefined;
      // A reply with only tool calls is shown by its calls' lines.
      const text = textOf(message);
      return text === '' ? undefined : `🤖 ${message.sender}: ${cut(text)}`;
    }
    case 'tool_call_start':
      if (interactionTools.has(event.data.name)) return undefined;
      return `  🔧 ${event.data.name}(${cut(event.data.arguments)})`;
    case 'tool_call_end': {
      if (interactionTools.has(event.data.name) && !event.data.is_error) return undefined;
      const mark = event.data.is_error ? '✗' : '✓';
      const note = event.data.interrupted ? ` [interrupted: ${event.data.interrupted}]` : '';
      return `  ${mark} ${event.data.name} → ${cut(event.data.content)}${note}`;
    }
    case 'file_change':
      return `    ${fileMarks[event.data.change]} ${event.data.change} ${cut(event.data.path)}${fileStat(event.data)}`;
    case 'error':
      return `  ⚠ ${event.data.step} attempt ${event.data.attempt} failed (${event.data.code}): ${cut(event.data.message)}${
        event.data.retry_in_ms === null ? '' : `; retrying in ${event.data.retry_in_ms} ms`
      }`;
    case 'ask_user':
      return renderQuestion(event.agent, event.data);
    case 'question_answered': {
      const by = event.data.answered_by === 'timeout' ? ' (timed out: default answer)' : '';
      return `  ↳ answered${by}: ${cut(describeAnswer(event.data.answer))}`;
    }
    case 'progress': {
      const bar = `  ${progressBar(event.data.fraction)}${event.data.message === '' ? '' : ` ${cut(event.data.message)}`}`;
      // A supervisor's sub-goals, one line each under the bar.
      const goals = (event.data.sub_goals ?? []).map(
        (goal) => `    ${goalMarks[goal.status]} ${cut(`${goal.id}: ${goal.title}`)}`,
      );
      const warning = event.data.warning ? [`    ⚠ ${cut(event.data.warning)}`] : [];
      return [bar, ...goals, ...warning].join('\n');
    }
    case 'compaction':
      return `  🗜 context compacted (${event.data.reason === 'threshold' ? 'threshold reached' : 'the model refused a request as too long'}): ${event.data.tokens_before} → ${event.data.tokens_after} tokens`;
    case 'loop_detected':
      return `  ↻ loop: ${event.data.tool}(${cut(event.data.arguments)}) called ${event.data.count} times in the last ${event.data.window_size} calls; the model was told`;
    case 'answer_rejected': {
      const check = event.data.check === 'output_guardrail' ? 'the output guardrail' : event.data.check;
      return `  ✗ answer rejected by ${check} (${event.data.retry}/${event.data.max_retries}): ${cut(event.data.reason)}`;
    }
    case 'reflection':
      return `  💭 ${event.data.failures} failed tool calls in a row; the model was asked to reflect`;
    case 'run_completed': {
      const { usage } = event.data;
      return `✔ completed after ${event.data.iterations} iterations (${usage.input_tokens} tokens in, ${usage.output_tokens} out)`;
    }
    case 'run_failed':
      return `✘ failed (${event.data.error.code}): ${event.data.error.message}`;
    case 'run_cancelled':
      return `✘ cancelled: ${event.data.reason}`;
    case 'waiting_for_worker':
      return `⏸ waiting for a worker that has ${event.data.missing.join(', ')}`;
    case 'worker_found':
      return `▶ a worker with ${event.data.missing.join(', ')} took the run on`;
    // createTreeRenderer prints a child run's start when its agent_start comes; the run's end is its
    // run_completed, run_failed or run_cancelled; a reply in progress is printed once recorded (message_added).
    case 'agent_start':
    case 'agent_end':
    case 'text_delta':
    case 'attempt_retried':
    case 'run_retried':
    case 'run_forked':
      return undefined;
    default:
      // Every kind has its case above, so a new kind is a compile error here until it is rendered (or not).
      event satisfies never;
      return undefined;
  }
}

/**
 * Renders the events of a session's run tree: each run's lines are indented by its depth (delegations and
 * team members arrive on the same stream with their own run ids), and show the agent's display prefix. The
 * followed run's start is printed at once; another run's when its agent_start arrives (right after
 * run_started, in the same commit), since that event says where the run sits in the tree.
 */
export function createTreeRenderer(rootRunId: string): (event: RatchetEvent) => string | undefined {
  const runs = new Map<string, { depth: number; prefix: string }>();
  const starts = new Map<string, string>();
  // Replies an answer_rejected event (which comes just before them) said were sent back: `run:iteration`.
  const rejected = new Set<string>();
  return (event) => {
    if (event.kind === 'answer_rejected') rejected.add(`${event.run_id}:${event.data.iteration}`);
    if (event.kind === 'message_added' && event.data.message.role === 'assistant') {
      const key = `${event.run_id}:${String(event.data.message.metadata.iteration)}`;
      if (rejected.delete(key)) {
        const text = textOf(event.data.message);
        const line = text === '' ? undefined : `    ↳ rejected answer: ${cut(text)}`;
        return line === undefined ? undefined : indent(line, runs.get(event.run_id)?.depth ?? 0);
      }
    }
    if (event.kind === 'run_started') {
      if (event.run_id === rootRunId) return renderEvent(event);
      starts.set(event.run_id, cut(event.data.input));
      return undefined;
    }
    if (event.kind === 'agent_start') {
      const { depth, prefix } = event.data;
      runs.set(event.run_id, { depth, prefix });
      const input = starts.get(event.run_id);
      starts.delete(event.run_id);
      if (input === undefined) return undefined;
      const line =
        depth === 0 ? `▶ ${event.agent} starts: ${input}` : `↳ ${prefix} ${event.agent} starts: ${input}`;
      return indent(line, depth);
    }
    const line = renderEvent(event);
    const run = runs.get(event.run_id);
    if (line === undefined || !run) return line;
    return indent(line.replace(/^🤖 /, `${run.prefix} `), run.depth);
  };
}

function indent(text: string, depth: number): string {
  const pad = '    '.repeat(depth);
  return text
    .split('\n')
    .map((line) => `${pad}${line}`)
    .join('\n');
}

function renderQuestion(agent: string, question: EventData<'ask_user'>): string {
  const timeout = question.timeout_at === null ? '' : ` (default answer at ${question.timeout_at})`;
  if (question.kind === 'approval' && question.tool) {
    return `❓ ${agent} wants to run ${question.tool.name}(${cut(question.tool.arguments)}): approve?${timeout}`;
  }
  const options = question.options.map((option, index) => `${index + 1}) ${option}`).join('  ');
  return `❓ ${agent} asks: ${cut(question.question)}${options === '' ? '' : `\n     ${options}`}${timeout}`;
}

/** An answer as a person reads it: text as is, an approval as its decision. */
export function describeAnswer(answer: unknown): string {
  if (typeof answer === 'string') return answer;
  if (typeof answer === 'object' && answer !== null && 'decision' in answer) {
    const {
      decision,
      reason,
      arguments: edited,
    } = answer as {
      decision: unknown;
      reason?: unknown;
      arguments?: unknown;
    };
    if (decision === 'reject')
      return typeof reason === 'string' && reason !== '' ? `rejected: ${reason}` : 'rejected';
    return edited === undefined ? 'approved' : `approved with ${JSON.stringify(edited)}`;
  }
  return JSON.stringify(answer) ?? String(answer);
}

const barWidth = 24;

/** `⏳ [██████░░░…]  25%` for a fraction in [0, 1]; the hourglass alone when the fraction is unknown. */
export function progressBar(fraction: number | null): string {
  if (fraction === null || !Number.isFinite(fraction)) return '⏳';
  const clamped = Math.min(1, Math.max(0, fraction));
  const filled = Math.round(clamped * barWidth);
  return `⏳ [${'█'.repeat(filled)}${'░'.repeat(barWidth - filled)}] ${String(Math.round(clamped * 100)).padStart(3)}%`;
}
