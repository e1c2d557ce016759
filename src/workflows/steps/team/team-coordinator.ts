import { z } from 'zod';
import type { Message } from '../../../chat/index.js';
import { isLlmCoordinator } from '../../../config/index.js';
import { RatchetError } from '../../../errors/index.js';
import { addUsage, type Usage, zeroUsage } from '../../../models/usage.js';
import {
  type CoordinatorDecision,
  coordinatorChat,
  maxCoordinatorReasonChars,
} from '../../core/coordinator-chat.js';
import type { TeamTurnJobData } from '../../job-data.js';
import { journalField, type TeamSelectionEntry } from '../../journal.js';
import { callModel, requestContext } from '../iteration/model-call.js';
import { descriptionOf } from '../runner/agent-runtime.js';
import { isPark, type Park } from '../runner/step-action.js';
import type { StepContext, TeamService } from '../runner/step-context.js';
import type { LoadedTurn } from './team-turn-load.js';

const choiceSchema = z.strictObject({
  members: z.array(z.string()),
  done: z.boolean(),
  reason: z.string().optional(),
});

/**
 * The `llm` coordinator: a model reads the team and its own chat (the latest `window` shared messages, with
 * what it decided at each earlier turn and why between them) and answers
 * {"members": [...], "done": bool, "reason": "..."}. An answer that is not that JSON (or names no member of
 * the team) gets one retry with the reason; a second bad answer fails the team run with a clear error.
 */
export async function chooseMembers(
  context: StepContext,
  data: TeamTurnJobData,
  team: TeamService,
  loaded: LoadedTurn,
): Promise<{ entry: TeamSelectionEntry; usage: Usage } | Park> {
  const agent = team.coordinatorAgent;
  const { coordinator } = team;
  if (!agent || !isLlmCoordinator(coordinator))
    throw new RatchetError('config_invalid', `team ${team.name} has no coordinator model`);
  // Everything the request holds comes from the run as recorded, so a turn that runs again sends the same.
  const createdAt = loaded.record.updated_at;
  const idOf = (id: string) => `${data.run_id}-t${data.iteration}-${id}`;
  const message = (id: string, role: 'system' | 'user' | 'assistant', text: string): Message => ({
    id: idOf(id),
    sender: role === 'assistant' ? agent.name : role,
    role,
    parts: [{ type: 'text', text }],
    metadata: {},
    created_at: createdAt,
  });
  const names = team.members.map((member) => member.agent);
  const decisions = new Map<number, CoordinatorDecision>();
  for (const [turn, entry] of loaded.decisions) {
    const members = entry.members.map((index) => names[index] ?? `#${index}`);
    decisions.set(turn, { members, done: entry.done, reason: entry.reason });
  }
  const messages: Message[] = [
    message('coord-system', 'system', systemPrompt(context, team, coordinator.instructions)),
    ...coordinatorChat({
      shared: loaded.shared,
      decisions,
      turn: data.iteration,
      window: coordinator.window,
      coordinator: agent.name,
      idOf,
      createdAt,
    }),
  ];
  let usage: Usage = { ...zeroUsage };
  let problem = '';
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const completion = await callModel(
      context,
      agent,
      {
        messages,
        tools: [],
        options: {},
        context: requestContext(context, data, agent.name),
      },
      journalField.teamCoordinatorCalls(data.iteration, attempt),
      loaded.record,
      'coordinator',
    );
    if (isPark(completion)) return completion;
    usage = addUsage(usage, completion.usage);
    const text = completion.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
    const parsed = parseChoice(text, team);
    if (parsed.ok) return { entry: { v: 1, ...parsed.choice }, usage };
    problem = parsed.problem;
    messages.push(
      message(`coord-reply-${attempt}`, 'assistant', text === '' ? '(empty)' : text),
      message(
        `coord-retry-${attempt}`,
        'user',
        `That answer could not be used: ${problem}. Reply with only the JSON object, e.g. {"members": ["${team.members[0]?.agent}"], "done": false, "reason": "why"}.`,
      ),
    );
  }
  throw new RatchetError(
    'coordinator_invalid',
    `the coordinator of team "${team.name}" did not answer with valid JSON twice: ${problem}`,
  );
}

function systemPrompt(context: StepContext, team: TeamService, instructions: string): string {
  const members = team.members
    .map((member) => {
      const description = descriptionOf(context.services, member.agent);
      return `- ${member.agent} (role: ${member.role})${description ? `: ${description}` : ''}`;
    })
    .join('\n');
  return [
    instructions.trim(),
    `You coordinate the team "${team.name}". Its members:`,
    members,
    'Decide who acts next. Members you name act at the same time; their answers are added to the ' +
      'conversation in the order you name them. When the last message of the conversation is the ' +
      "team's finished answer, say done. Each user message holds what was added to the team's " +
      'conversation since your previous decision; your earlier decisions follow them.',
    'Reply with only a JSON object: {"members": ["<member name>", ...], "done": <true|false>, ' +
      '"reason": "<why, in a sentence>"}.',
  ]
    .filter((line) => line !== '')
    .join('\n\n');
}

type Parsed =
  | { ok: true; choice: { members: number[]; done: boolean; reason?: string } }
  | { ok: false; problem: string };

function parseChoice(text: string, team: TeamService): Parsed {
  const json = text
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '');
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return { ok: false, problem: 'it is not JSON' };
  }
  const result = choiceSchema.safeParse(value);
  if (!result.success)
    return {
      ok: false,
      problem:
        'it needs exactly the fields "members" (a list of names) and "done" (true or false), and may ' +
        'have "reason" (text)',
    };
  const names = team.members.map((member) => member.agent);
  const unknown = result.data.members.filter((name) => !names.includes(name));
  if (unknown.length > 0)
    return {
      ok: false,
      problem: `${unknown.map((name) => `"${name}"`).join(', ')} is not a member (members: ${names.join(', ')})`,
    };
  if (!result.data.done && result.data.members.length === 0)
    return { ok: false, problem: 'name at least one member, or say done' };
  return {
    ok: true,
    choice: {
      members: result.data.members.map((name) => names.indexOf(name)),
      done: result.data.done,
      ...(result.data.reason === undefined
        ? {}
        : { reason: result.data.reason.slice(0, maxCoordinatorReasonChars) }),
    },
  };
}
