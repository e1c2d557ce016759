import type { ContextView, Message, Part } from '../../../chat/index.js';
import type { Usage } from '../../../models/usage.js';
import type { ModelCallInput } from '../../core/effects/index.js';
import type { AnswerCheckFailure } from '../../core/reply-decision.js';
import type { replyCommit } from '../../core/run-commits.js';
import type { SupervisorLimits } from '../../core/supervisor.js';
import type { UpgradeDecision } from '../../core/upgrade-decision.js';
import type { IterationJobData } from '../../job-data.js';
import type { ReplyEntry } from '../../journal.js';
import type { PendingMessage } from '../../pending-message.js';
import type { StoredRun } from '../../run-record.js';
import type { AgentRuntime, StepContext } from '../runner/step-context.js';
import type { CompactionDecision, SendPlan } from './context-effects.js';
import type { ModelCallCount } from './model-call-count.js';

/** An upgrade decided at an iteration boundary (decision 0030), committed with the iteration's reply. */
export type { UpgradeDecision } from '../../core/upgrade-decision.js';

/** What one round trip read for the iteration: the run, the journal fields it needs, and the chat. */
export interface LoadedIteration {
  run: StoredRun | undefined;
  reply: ReplyEntry | undefined;
  /** The previous iteration's reply entry, parsed only by the stages that need it. */
  previousReply: string | null;
  resultsDone: boolean;
  /** Model calls started for this iteration by earlier executions. */
  modelCalls: number;
  /** The count the load made for this execution's model call (decision 0054); absent when it made none. */
  modelCallCount: ModelCallCount | undefined;
  /** When POST /v1/runs/:id/upgrade last asked to move the run to the current definition; null: never. */
  upgradeRequestedAt: string | null;
  /** An earlier execution appended the messages steered into the run before this iteration (`steered:<n>`). */
  steeredDone: boolean;
  /** Messages steered into the run, waiting for its next iteration (decision 0032). */
  steered: PendingMessage[];
  /** Chat entries of the previous iteration's results still waiting in the journal (fallback only). */
  pendingResults: (string | null)[];
  chat: Message[];
  /** The chat's context view: what the model is sent of it. */
  view: ContextView;
}

/** What an iteration records as its reply, from a model or from a child run. */
export interface ReplyOfTurn {
  parts: Part[];
  usage: Usage;
  costUsd: number;
  /** The max_iterations of whoever replied. */
  maxIterations: number;
  /** A check (the output guardrail, the output schema, a middleware) rejected this final answer. */
  rejection?: AnswerCheckFailure;
  /** The provider and model that made the reply (a model reply of an agent only). */
  model?: { provider: string; model: string };
  /** What the effects added to and recorded of the request (a model reply of an agent only). */
  effects?: Parameters<typeof replyCommit>[0]['effects'];
  /** The sub-goal limits of a supervisor that replied (its calls move its sub-goals). */
  supervisor?: SupervisorLimits;
  /** The run's sub-goals moved before this reply (the finishing reply of a supervisor): report the change. */
  goalsMoved?: boolean;
  /** Made without a model call (a supervisor's finishing reply): no call of the iteration was wasted. */
  noModelCall?: boolean;
  /** What the agent's middleware decided around the model call (a model reply of an agent only). */
  middleware?: Parameters<typeof replyCommit>[0]['middleware'];
}

/**
 * The one record an iteration carries from stage to stage (iteration-step.ts lists them). It is born from the
 * load; each stage reads what earlier ones filled in and adds its own part, so a field that is set says how
 * far the iteration got: who replies, what the request is planned from, the reply, the reply as recorded.
 */
export interface Turn {
  readonly context: StepContext;
  readonly data: IterationJobData;
  readonly loaded: LoadedIteration;
  /** The run as the iteration's last commit left it, and its revision (what the next commit builds on). */
  stored: StoredRun;
  /** The chat, with the previous iteration's results (results stage). */
  chat: readonly Message[];
  /** Who replies: the run's agent, or the member of a handoff group in control (replier stage). */
  member?: string;
  /** The agent whose model replies (replier stage); absent when a child run replies. */
  agent?: AgentRuntime;
  /** What the request is planned from (request stage); the view changes with each compaction. */
  input?: ModelCallInput;
  /** A compaction to make before the request is planned again (plan stage, or a refusal as too long). */
  compaction?: CompactionDecision;
  /** The request the effects planned (plan stage), and whether it is within the budget (budget stage). */
  plan?: SendPlan;
  withinBudget?: boolean;
  /** The reply to record (a child run's, a supervisor's summary, or the model's). */
  reply?: ReplyOfTurn;
  /**
   * The reply as recorded (by an earlier execution, or by the reply's commit), who made it, and the hash of
   * the definition the run works under from then on (decision 0030); `enqueued` when the reply's commit added
   * the steps it asks for in its write (decision 0051).
   */
  recorded?: { entry: ReplyEntry; sender: string; definition?: string | undefined; enqueued?: boolean };
  /**
   * This iteration moves the run to another definition (options.on_change: upgrade, or POST /upgrade): the
   * hashes, the fields that changed, or why it stays (the agent is gone). Committed with the reply.
   */
  upgrade?: UpgradeDecision;
}

/** The hash of the definition the turn works under: the run's, or the one an upgrade moves it to. */
export function turnDefinition(turn: Turn): string | undefined {
  return turn.upgrade?.to ?? turn.stored.record.definition?.hash;
}
