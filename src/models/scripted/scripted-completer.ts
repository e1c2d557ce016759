import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { type Message, textOf } from '../../chat/index.js';
import type { Completer, CompletionRequest } from '../completer.js';
import { completionOf } from './completion-of.js';
import { errorOf, failureFor } from './injected-failure.js';
import { parseScript } from './load-script.js';
import type { Script, ScriptedReply } from './script-schema.js';
import { scriptPosition, selectReply } from './select-reply.js';

export interface ScriptedCompleterOptions {
  /**
   * A JSON-lines file that gets one line per call, `{time, pid, session_id, run_id, agent, iteration, attempt,
   * position, tools (names offered), system (the system prompt), purpose (`summary` for a compaction's
   * request), response_format (when it takes structured output), messages (each `{id, role, text}`: exactly
   * what the model was sent)}`, written synchronously
   * before the reply so a SIGKILL right after still leaves it.
   */
  recordCallsTo?: string;
  /** Whether it takes a request's response format (structured output): then the call log records it. */
  structuredOutput?: boolean;
}

/**
 * A deterministic model: the reply is a pure function of the chat and `context.attempt` (see selectReply),
 * so a call retried in another process after a crash gets the same reply. The script is validated here;
 * a bad one throws config_invalid.
 */
export function createScriptedCompleter(script: Script, options: ScriptedCompleterOptions = {}): Completer {
  const checked = parseScript(script, 'scripted model script');
  const { recordCallsTo, structuredOutput = false } = options;
  if (recordCallsTo !== undefined) mkdirSync(dirname(recordCallsTo), { recursive: true });
  return {
    async complete(request, signal) {
      signal.throwIfAborted();
      if (recordCallsTo !== undefined) {
        recordCall(recordCallsTo, request, scriptPosition(request.messages), structuredOutput);
      }
      const { reply, position } =
        request.context.purpose === 'summary'
          ? { reply: checked.summary ?? defaultSummary(request), position: scriptPosition(request.messages) }
          : selectReply(checked, request.messages);
      if (reply.delay_ms !== undefined && reply.delay_ms > 0) await sleep(reply.delay_ms, signal);
      const failure = failureFor(reply, request.context.attempt);
      if (failure) throw errorOf(failure);
      // Streaming: the reply's text in word-sized pieces, as a provider would send it.
      if (request.onTextDelta && reply.text) {
        for (const piece of reply.text.match(/\S+\s*/g) ?? []) request.onTextDelta(piece);
      }
      return completionOf(reply, position, request);
    },
  };
}

function recordCall(
  path: string,
  request: CompletionRequest,
  position: number,
  structuredOutput: boolean,
): void {
  const { context } = request;
  const system = request.messages[0]?.role === 'system' ? request.messages[0] : undefined;
  const line = {
    time: new Date().toISOString(),
    pid: process.pid,
    session_id: context.sessionId,
    run_id: context.runId,
    agent: context.agent,
    iteration: context.iteration,
    attempt: context.attempt,
    position,
    tools: request.tools.map((tool) => tool.name),
    system: system ? textOf(system) : '',
    ...(context.purpose ? { purpose: context.purpose } : {}),
    ...(structuredOutput && request.options.responseFormat
      ? { response_format: request.options.responseFormat }
      : {}),
    messages: request.messages.map(renderMessage),
  };
  appendFileSync(path, `${JSON.stringify(line)}\n`);
}

/** A message as the call log shows it: its id, role and every part as one line of text. */
function renderMessage(message: Message): { id: string; role: Message['role']; text: string } {
  return { id: message.id, role: message.role, text: message.parts.map(partLine).join('\n') };
}

function partLine(part: Message['parts'][number]): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'tool_call':
      return `call ${part.name}(${part.arguments})`;
    case 'tool_result':
      return `${part.is_error ? 'error' : 'result'}: ${part.content}`;
    case 'image':
      return '[image]';
  }
}

/** The scripted model's summary when its script has none: how many entries the request asked about. */
function defaultSummary(request: CompletionRequest): ScriptedReply {
  const input = request.messages.at(-1);
  const entries = input ? (textOf(input).match(/^\[\d+\] /gm) ?? []).length : 0;
  return { text: `Scripted summary of ${entries} conversation entries.` };
}

/** Waits, or rejects with the signal's reason as soon as it aborts (as fetch does). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
