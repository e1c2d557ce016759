import type { Message } from '../../chat/index.js';
import { RatchetError } from '../../errors/index.js';
import type { Script, ScriptedReply, ScriptedRule } from './script-schema.js';

export type ReplySource = { kind: 'rule'; index: number } | { kind: 'sequence' } | { kind: 'default' };

export interface SelectedReply {
  reply: ScriptedReply;
  /** The number of assistant messages already in the chat; the index into `replies`. */
  position: number;
  source: ReplySource;
}

/**
 * Picks the reply for a chat. A pure function of the chat, never of in-process state, so a call retried by
 * another process after a crash gets the same reply.
 *
 * Rules and `replies` share one counter: the position counts every assistant message, rule replies
 * included, so a rule that fires at position 2 consumes `replies[2]`.
 */
export function selectReply(script: Script, messages: readonly Message[]): SelectedReply {
  const position = scriptPosition(messages);
  const input = latestInput(messages);
  const rules = script.rules ?? [];
  if (input) {
    const index = rules.findIndex((rule) => ruleMatches(rule, input));
    const rule = rules[index];
    if (rule) return { reply: rule.reply, position, source: { kind: 'rule', index } };
  }
  const replies = script.replies ?? [];
  const reply = replies[position];
  if (reply) return { reply, position, source: { kind: 'sequence' } };
  if (script.default) return { reply: script.default, position, source: { kind: 'default' } };
  throw new RatchetError(
    'script_exhausted',
    `scripted model: the script has ${replies.length} ${replies.length === 1 ? 'reply' : 'replies'} ` +
      `and this is request ${position + 1} of the chat (${position} assistant messages already); ` +
      'no rule matched and there is no default',
    { details: { position, replies: replies.length } },
  );
}

/**
 * The number of assistant messages in the chat: those in the request, and those a summary or a window note
 * stands for (metadata `hidden_replies`), so a request whose older part was summarised keeps its place in
 * the script.
 */
export function scriptPosition(messages: readonly Message[]): number {
  let position = 0;
  for (const message of messages) {
    if (message.role === 'assistant') position += 1;
    const hidden = message.metadata.hidden_replies;
    if (typeof hidden === 'number' && Number.isInteger(hidden) && hidden > 0) position += hidden;
  }
  return position;
}

/** The message a rule is tested against: the latest user or tool message. */
export function latestInput(messages: readonly Message[]): Message | undefined {
  return messages.findLast((message) => message.role === 'user' || message.role === 'tool');
}

function ruleMatches(rule: ScriptedRule, input: Message): boolean {
  const { role = 'any', contains, matches } = rule.when;
  if (role !== 'any' && role !== input.role) return false;
  const text = searchableText(input);
  if (contains !== undefined && !text.includes(contains)) return false;
  if (matches !== undefined && !new RegExp(matches).test(text)) return false;
  return true;
}

/** Text parts and tool result contents, joined by newlines. */
function searchableText(message: Message): string {
  const texts: string[] = [];
  for (const part of message.parts) {
    if (part.type === 'text') texts.push(part.text);
    else if (part.type === 'tool_result') texts.push(part.content);
  }
  return texts.join('\n');
}
