import type { TriggerConfig } from '../config/index.js';
import { RatchetError } from '../errors/index.js';
import { mainChatId } from '../redis/keys.js';
import { externalEventLimits } from '../schemas/index.js';
import type { KeptEvent } from '../tools/index.js';
import { planRunCreation, triggeredRunIds } from '../workflows/index.js';
import type { EngineParts } from './engine-parts.js';
import { assertAgent, deadlineOf, isTeam, prefixOf } from './run-limits.js';
import { definitionOf } from './runs.js';

export interface TriggeredRun {
  /** The trigger's place in the config's `triggers`. */
  trigger: number;
  agent: string;
  run_id: string;
  session_id: string;
  /** False when an earlier copy of the event started it. */
  started: boolean;
}

const placeholder = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;

function textOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * A trigger's input for an event: `{{payload.a.b}}` is the payload's value at that path (text as is, other
 * values as JSON, absent as nothing), `{{event}}` the event's name, `{{id}}` its id. Bounded: a longer input
 * is refused, naming the limit.
 */
export function renderTriggerInput(template: string, event: Pick<KeptEvent, 'id' | 'event' | 'payload'>) {
  const rendered = template.replace(placeholder, (_whole, path: string) => {
    if (path === 'event') return event.event;
    if (path === 'id') return event.id;
    const [head, ...rest] = path.split('.');
    if (head !== 'payload') return '';
    let value: unknown = event.payload;
    for (const key of rest) {
      if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return '';
      value = (value as Record<string, unknown>)[key];
    }
    return textOf(value);
  });
  if (rendered.length > externalEventLimits.renderedInputChars) {
    throw new RatchetError(
      'invalid_run_settings',
      `the input trigger "${event.event}" makes is ${rendered.length} characters; at most ` +
        `${externalEventLimits.renderedInputChars} fit: send a smaller payload`,
      { details: { field: 'payload', limit: externalEventLimits.renderedInputChars } },
    );
  }
  return rendered;
}

/**
 * Starts the run of a trigger for an event, once: its session and run ids derive from the trigger's place and
 * the event id, so a copy of the event (or a retried request) finds the run there and starts nothing.
 */
export async function startTriggeredRun(
  parts: EngineParts,
  input: { index: number; trigger: TriggerConfig; eventId: string; entry: KeptEvent },
): Promise<TriggeredRun> {
  const { options } = parts;
  const { trigger } = input;
  const { sessionId, runId } = triggeredRunIds(`${input.index}/${trigger.agent}/${input.eventId}`);
  const result = (started: boolean): TriggeredRun => ({
    trigger: input.index,
    agent: trigger.agent,
    run_id: runId,
    session_id: sessionId,
    started,
  });
  if (await parts.store.loadRun(sessionId, runId)) return result(false);
  assertAgent(options, trigger.agent);
  const text = renderTriggerInput(trigger.input, input.entry);
  const now = parts.now();
  const deadlineAt = deadlineOf(options, now, trigger.agent, undefined);
  const plan = planRunCreation({
    sessionId,
    runId,
    agent: trigger.agent,
    chatId: mainChatId,
    parts: [{ type: 'text', text }],
    newSession: {
      metadata: { trigger: { index: input.index, event: trigger.event, event_id: input.eventId } },
    },
    ...(deadlineAt ? { deadlineAt } : {}),
    prefix: prefixOf(options, trigger.agent),
    team: isTeam(options, trigger.agent),
    ...definitionOf(options, trigger.agent),
    chatLength: 0,
    now: now.toISOString(),
  });
  const { code } = await parts.runWriter.write({ plan, chatLength: 0 });
  if (code === 'OK') return result(true);
  // Another copy of the event created it meanwhile (the session is new, so nothing else can be there).
  if (code === 'RUN_EXISTS' || code === 'SESSION_BUSY' || code === 'CONFLICT') return result(false);
  throw new RatchetError('internal', `create-run returned ${code} for trigger ${input.index}`);
}
