import { z } from 'zod';
import { parseJsonRecord } from '../../../schemas/parse.js';
import { defineRecordKind } from '../../../schemas/record-kinds.js';
import { redactSecrets } from '../../../secrets/index.js';
import type { RunContextSource } from '../../../tools/index.js';
import type { AgentRuntime, StepContext } from '../runner/step-context.js';

/**
 * The journal field holding what a run's instructions were given at its start (project context files,
 * memory): read once, by the run's first iteration, so every later request and every repeat of a step sends
 * the same text, whatever the files or the memory say by then.
 */
export const runContextField = 'run-context';

const runContextSchema = z.strictObject({ v: z.literal(1), text: z.string(), at: z.iso.datetime() });

/** Recorded texts by run id: a record never changes once written, so a worker keeps the latest few. */
const recordedTexts = new Map<string, string>();
const maxRemembered = 1_000;

function remember(runId: string, text: string): string {
  if (recordedTexts.size >= maxRemembered) {
    const oldest = recordedTexts.keys().next().value;
    if (oldest !== undefined) recordedTexts.delete(oldest);
  }
  recordedTexts.set(runId, text);
  return text;
}

/** The agent's toolboxes' start-of-run sources, each key once, in toolbox order. */
function sourcesOf(agent: Pick<AgentRuntime, 'toolboxes'>): RunContextSource[] {
  const sources = new Map<string, RunContextSource>();
  for (const toolbox of agent.toolboxes) {
    const source = toolbox.runContext;
    if (source && !sources.has(source.key)) sources.set(source.key, source);
  }
  return [...sources.values()];
}

/**
 * The text the run's instructions get from its toolboxes (empty when none gives any): recorded in the run's
 * journal by the first execution that reads it, read back by every later one.
 */
export async function runContextText(
  context: StepContext,
  agent: Pick<AgentRuntime, 'toolboxes' | 'name'>,
  runId: string,
): Promise<string> {
  const sources = sourcesOf(agent);
  if (sources.length === 0) return '';
  const known = recordedTexts.get(runId);
  if (known !== undefined) return known;
  const [stored] = await context.store.journalFields([runContextField]);
  if (stored) return remember(runId, parseRecorded(stored, runId));
  const now = context.services.now();
  const request = { agent: agent.name, memory: context.store.memory, now, signal: context.signal };
  const texts = await Promise.all(sources.map((source) => source.read(request)));
  // Recorded and sent to the model like a tool result, so hidden like one: a context file, a note or a
  // toolbox of yours may hold a secret this process knows (decision 0027).
  const text = redactSecrets(texts.filter((part) => part !== '').join('\n\n'));
  const record = JSON.stringify({ v: 1, text, at: now.toISOString() });
  return remember(
    runId,
    parseRecorded(await context.store.recordJournalOnce(runContextField, record), runId),
  );
}

function parseRecorded(stored: string, runId: string): string {
  return parseJsonRecord(runContextSchema, stored, `journal ${runContextField} of ${runId}`).text;
}

/** The system message: the agent's instructions, then what its run was given at its start. */
export function instructionsWithContext(instructions: string, runContext: string): string {
  if (runContext === '') return instructions;
  return instructions.trim() === '' ? runContext : `${instructions}\n\n${runContext}`;
}

defineRecordKind({ name: 'journal.run-context', version: 1, schema: runContextSchema });
