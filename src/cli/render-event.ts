import { textOf, toolCallsOf } from '../chat/index.js';
import type { RatchetEvent } from '../events/event.js';

const maxLine = 160;

function cut(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > maxLine ? `${line.slice(0, maxLine - 1)}…` : line;
}

/** One readable terminal line per event (or none, for events that another line already shows). */
export function renderEvent(event: RatchetEvent): string | undefined {
  switch (event.kind) {
    case 'run_started':
      return `▶ ${event.agent} starts: ${cut(event.data.input)}`;
    case 'message_added': {
      const { message } = event.data;
      if (message.role !== 'assistant') return undefined;
      const text = textOf(message);
      const calls = toolCallsOf(message).length;
      if (text === '' && calls === 0) return undefined;
      return `🤖 ${event.agent}: ${cut(text === '' ? `(calls ${calls} tool${calls === 1 ? '' : 's'})` : text)}`;
    }
    case 'tool_call_start':
      return `  🔧 ${event.data.name}(${cut(event.data.arguments)})`;
    case 'tool_call_end': {
      const mark = event.data.is_error ? '✗' : '✓';
      const note = event.data.interrupted ? ` [interrupted: ${event.data.interrupted}]` : '';
      return `  ${mark} ${event.data.name} → ${cut(event.data.content)}${note}`;
    }
    case 'error':
      return `  ⚠ ${event.data.step} attempt ${event.data.attempt} failed (${event.data.code}): ${cut(event.data.message)}${
        event.data.retry_in_ms === null ? '' : `; retrying in ${event.data.retry_in_ms} ms`
      }`;
    case 'run_completed': {
      const { usage } = event.data;
      return `✔ completed after ${event.data.iterations} iterations (${usage.input_tokens} tokens in, ${usage.output_tokens} out)`;
    }
    case 'run_failed':
      return `✘ failed (${event.data.error.code}): ${event.data.error.message}`;
    case 'run_cancelled':
      return `✘ cancelled: ${event.data.reason}`;
    default:
      return undefined;
  }
}
