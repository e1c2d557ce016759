import type { ContextView, Message } from '../../chat/index.js';
import type { ModelCallInput } from '../core/effects/index.js';
import type { IterationJobData } from '../job-data.js';
import type { ReplyEntry } from '../journal.js';
import type { RunRecord, StoredRun } from '../run-record.js';
import type { AgentRuntime, StepContext } from './step-context.js';

/**
 * What an iteration carries from stage to stage (iteration-step.ts composes them): what it loaded, the run as
 * its last commit left it, the chat, the agent that replies and the request in the making.
 */

/** What one round trip read for the iteration: the run, the journal fields it needs, and the chat. */
export interface LoadedIteration {
  run: StoredRun | undefined;
  reply: ReplyEntry | undefined;
  /** The previous iteration's reply entry, parsed only by the stages that need it. */
  previousReply: string | null;
  resultsDone: boolean;
  /** Model calls started for this iteration by earlier executions. */
  modelCalls: number;
  /** Chat entries of the previous iteration's results still waiting in the journal (fallback only). */
  pendingResults: (string | null)[];
  chat: Message[];
  /** The chat's context view: what the model is sent of it. */
  view: ContextView;
}

/** The run as the iteration's last commit left it, and its revision (what the next commit builds on). */
export type Stored = { record: RunRecord; rev: number };

/** An iteration about to ask its agent for a reply: the step, what it loaded, the run, the chat, the agent. */
export interface Turn {
  context: StepContext;
  data: IterationJobData;
  loaded: LoadedIteration;
  stored: Stored;
  chat: Message[];
  agent: AgentRuntime;
}

/** An iteration whose reply is about to be recorded: the turn, whoever made the reply. */
export type ReplyTurn = Omit<Turn, 'agent' | 'chat'> & { chat: readonly Message[] };

/** An iteration's model request in the making: the turn, and what the request is planned from. */
export interface RequestState extends Omit<Turn, 'chat'> {
  input: ModelCallInput;
}
