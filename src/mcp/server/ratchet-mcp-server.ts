import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import {
  type AgentSummary,
  type ApiEngine,
  cancelRun,
  forkRun,
  listAgents,
  listPendingQuestions,
  listRunsPage,
  listSessionsPage,
  requireRun,
  requireRunSteps,
  requireRunTree,
  respondToQuestion,
  retryRun,
  sessionNotesOf,
  sessionStateOf,
  sessionTasksOf,
  submitRun,
} from '../../api/index.js';
import type { Logger } from '../../log/index.js';
import {
  acceptedRunSchema,
  agentListSchema,
  createRunBodySchema,
  forkRunBodySchema,
  inboxSchema,
  maxInboxLimit,
  maxWaitSeconds,
  respondAcceptedSchema,
  retryRunBodySchema,
  runListInputSchema,
  runListSchema,
  runSchema,
  runStepsSchema,
  runTreeSchema,
  sendEventBodySchema,
  sentEventSchema,
  sentSignalSchema,
  sessionListInputSchema,
  sessionListSchema,
  sessionNoteListSchema,
  sessionStateSchema,
  sessionTaskListSchema,
  signalRunBodySchema,
  stepsQuerySchema,
} from '../../wire/index.js';
import { questionResponseSchema } from '../../workflows/index.js';
import { toolAnswer } from './tool-answer.js';
import { waitWithProgress } from './wait-with-progress.js';

export interface RatchetMcpServerOptions {
  engine: ApiEngine;
  /** The configured agents (list_agents). */
  agents: readonly AgentSummary[];
  logger: Logger;
  /** wait_run's heartbeat when no event comes (default 10 s). */
  heartbeatMs?: number;
}

const defaultHeartbeatMs = 10_000;

/**
 * An output schema must be an object schema at its top; the API's named schemas (`Run` …) would become a
 * `$ref`. The same fields, without the name.
 */
function outputOf<Shape extends z.ZodRawShape>(schema: z.ZodObject<Shape>) {
  return z.strictObject(schema.shape);
}

/** The run as the API shows it, as a tool's output. */
const runOutputSchema = outputOf(runSchema);

const runIdSchema = z.string().min(1).max(200).describe('The run id (run_…) that submit_task returned.');

const instructions =
  'Ratchet runs tasks with durable LLM agents. submit_task starts a run and returns its run_id at once; ' +
  'wait_run waits for it (call again while `finished` is false). A run whose status is waiting_input has ' +
  'a pending_question: answer it with respond, and the run goes on. list_agents shows who can work on a task.';

/**
 * Ratchet as an MCP server: the same operations as the HTTP API (through the same shared functions), as
 * tools. It keeps no state of its own: every answer is read from Redis, so a server per request (stateless
 * HTTP) and a long-lived one (stdio) behave alike.
 */
export function createRatchetMcpServer(options: RatchetMcpServerOptions): McpServer {
  const { engine, logger } = options;
  const heartbeatMs = options.heartbeatMs ?? defaultHeartbeatMs;
  // The version of the tool interface, like the HTTP API's.
  const server = new McpServer(
    { name: 'ratchet', version: '1' },
    { capabilities: { tools: {} }, instructions },
  );

  server.registerTool(
    'submit_task',
    {
      title: 'Submit a task',
      description:
        'Starts a run of an agent on the task and returns {run_id, session_id} at once (the run goes on in ' +
        "Ratchet's workers). Give session_id to continue a session's conversation (one active run per session); " +
        'with on_busy (reject, queue, steer, interrupt) it says what to do while that session has an active run, ' +
        "and the answer's `delivery` says what happened.",
      inputSchema: createRunBodySchema,
      outputSchema: outputOf(acceptedRunSchema),
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    (input) => toolAnswer('submit_task', logger, () => submitRun(engine, input)),
  );

  server.registerTool(
    'get_run',
    {
      title: 'Get a run',
      description:
        'A run now: status (queued, running, waiting_input, completed, failed, cancelled), result or error, ' +
        'usage, progress and the pending question.',
      inputSchema: z.strictObject({ run_id: runIdSchema }),
      outputSchema: runOutputSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ run_id }) => toolAnswer('get_run', logger, () => requireRun(engine, run_id)),
  );

  server.registerTool(
    'get_run_steps',
    {
      title: "Get a run's steps",
      description:
        'What a run did, step by step, from its journal: per iteration the model, tokens, cost, duration, each ' +
        'attempt (which worker ran it, and whether it was a retry after an error, a takeover after a worker ' +
        'died, or a wake-up after a wait), effects and compaction, the verdict on the answer; per tool call ' +
        'its arguments and result (cut at cut_at characters, with their full size), ledger outcome, approval ' +
        'and waits. A page of iterations from `from`; next_from is the next page.',
      inputSchema: z.strictObject({ run_id: runIdSchema, ...stepsQuerySchema.shape }),
      outputSchema: outputOf(runStepsSchema),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ run_id, ...page }) =>
      toolAnswer('get_run_steps', logger, async () => ({ ...(await requireRunSteps(engine, run_id, page)) })),
  );

  server.registerTool(
    'get_run_tree',
    {
      title: "Get a run's tree",
      description:
        'The run and every run below it (delegations, spawns, team turns, handoff members), depth first: ' +
        'agent, status, error code, times, duration, iterations, tokens, cost and contract verdict of each.',
      inputSchema: z.strictObject({ run_id: runIdSchema }),
      outputSchema: outputOf(runTreeSchema),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ run_id }) => toolAnswer('get_run_tree', logger, () => requireRunTree(engine, run_id)),
  );

  server.registerTool(
    'list_runs',
    {
      title: 'List runs',
      description:
        'Runs, newest first (each: id, session, agent, status, root run, creation time, iterations, usage, ' +
        'cost, start/update/finish times), filtered by status ' +
        '(e.g. ["failed"] or ["waiting_input"]), agent, session_id, root (true: top-level runs only), ' +
        'since/until (creation time) and q (id prefix). A page of `limit`; pass next_cursor as cursor for the ' +
        'next one (null: no more).',
      inputSchema: runListInputSchema,
      outputSchema: outputOf(runListSchema),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (input) => toolAnswer('list_runs', logger, () => listRunsPage(engine, input)),
  );

  server.registerTool(
    'list_sessions',
    {
      title: 'List sessions',
      description:
        'Sessions, most recently active first (each: id, agent, idle or active, active run, last activity), ' +
        'filtered by status, agent, since/until (last activity) and q (id prefix); paged like list_runs.',
      inputSchema: sessionListInputSchema,
      outputSchema: outputOf(sessionListSchema),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (input) => toolAnswer('list_sessions', logger, () => listSessionsPage(engine, input)),
  );

  server.registerTool(
    'wait_run',
    {
      title: 'Wait for a run',
      description:
        'Waits until the run is finished or timeout_s passes, and returns {finished, run}: finished is false ' +
        'when the timeout passed first (call again to keep waiting). With a progressToken, each event of the ' +
        'run (iterations, tool calls, questions) is sent as a progress notification while it waits.',
      inputSchema: z.strictObject({
        run_id: runIdSchema,
        timeout_s: z
          .number()
          .min(0)
          .max(maxWaitSeconds)
          .default(30)
          .describe(`Seconds to wait for the run to finish (at most ${maxWaitSeconds}).`),
      }),
      outputSchema: z.strictObject({
        finished: z.boolean().describe('false: the timeout passed before the run finished.'),
        run: runOutputSchema,
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ run_id, timeout_s }, extra) => {
      const progressToken = extra._meta?.progressToken;
      const report =
        progressToken === undefined
          ? undefined
          : (progress: number, message: string) =>
              extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress, message },
              });
      return toolAnswer('wait_run', logger, async () => {
        const { finished, run } = await waitWithProgress(engine, run_id, {
          timeoutS: timeout_s,
          signal: extra.signal,
          report,
          heartbeatMs,
          logger,
        });
        return { finished, run };
      });
    },
  );

  server.registerTool(
    'respond',
    {
      title: 'Answer a question',
      description:
        "Answers an agent's pending question (ask_user), a tool approval or a budget question; the run goes " +
        "on. Name the question by question_id, or give run_id to answer that run's pending question. answer: " +
        'text for ask_user; "approve" / "reject" or {decision, reason?, arguments?} for an approval; "raise" / ' +
        '"stop" for a budget.',
      inputSchema: z
        .strictObject({
          question_id: z
            .string()
            .min(1)
            .optional()
            .describe('The question (pending_question.id of the run).'),
          run_id: runIdSchema.optional().describe("Answer this run's pending question."),
          answer: questionResponseSchema,
        })
        .refine((input) => (input.question_id === undefined) !== (input.run_id === undefined), {
          message: 'give either question_id or run_id',
        }),
      outputSchema: outputOf(respondAcceptedSchema),
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    ({ question_id, run_id, answer }) =>
      toolAnswer('respond', logger, () =>
        respondToQuestion(
          engine,
          question_id === undefined ? { run_id: run_id ?? '' } : { question_id },
          answer,
        ),
      ),
  );

  server.registerTool(
    'cancel_run',
    {
      title: 'Cancel a run',
      description: 'Cancels the run (and its child runs): it stops at once. Returns the run.',
      inputSchema: z.strictObject({
        run_id: runIdSchema,
        reason: z.string().min(1).max(1000).optional().describe('Recorded in the run_cancelled event.'),
      }),
      outputSchema: runOutputSchema,
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    ({ run_id, reason }) => toolAnswer('cancel_run', logger, () => cancelRun(engine, run_id, reason)),
  );

  server.registerTool(
    'retry_run',
    {
      title: 'Retry a run',
      description:
        'Continues a failed or cancelled run from its last recorded iteration, as a new run of the same ' +
        'session (no recorded model reply or tool result is paid for again), optionally with new limits within ' +
        "the agent's. Returns {run_id, session_id} of the new run; wait for it with wait_run.",
      inputSchema: z.strictObject({ run_id: runIdSchema, ...retryRunBodySchema.unwrap().unwrap().shape }),
      outputSchema: outputOf(acceptedRunSchema),
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    ({ run_id, ...limits }) => toolAnswer('retry_run', logger, () => retryRun(engine, run_id, limits)),
  );

  server.registerTool(
    'fork_run',
    {
      title: 'Fork a run',
      description:
        "Starts a new session whose chat is the run's up to iteration at_iteration's recorded reply (copied, " +
        'not asked again), continuing from there with an optional new message (input) or another agent. ' +
        'Returns {run_id, session_id} of the fork; wait for it with wait_run.',
      inputSchema: z.strictObject({ run_id: runIdSchema, ...forkRunBodySchema.shape }),
      outputSchema: outputOf(acceptedRunSchema),
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    ({ run_id, ...fork }) => toolAnswer('fork_run', logger, () => forkRun(engine, run_id, fork)),
  );

  server.registerTool(
    'send_event',
    {
      title: 'Send an event',
      description:
        'Sends an event to the deployment (as POST /v1/events): every run waiting for its name ' +
        '(wait_for_event) whose match the payload contains receives it, a wait that starts within ' +
        'events.retention_s too, and each trigger of the name starts its run. Give `id` and send again until it ' +
        'is answered: the same id delivers once (`duplicate: true`). Events reach every tenant: a tenant ' +
        'token is refused (signal_run a run of your own instead). Returns {id, duplicate, woken, runs}.',
      inputSchema: sendEventBodySchema,
      outputSchema: outputOf(sentEventSchema),
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: true,
      },
    },
    (sent) => toolAnswer('send_event', logger, async () => ({ ...(await engine.sendEvent(sent)) })),
  );

  server.registerTool(
    'signal_run',
    {
      title: 'Signal a run',
      description:
        'Sends a signal to one run (as POST /v1/runs/:id/signal): its wait_for_event for that name receives ' +
        'it, now or when it waits later; the same `id` delivers once. Returns {id, duplicate, woken}.',
      inputSchema: z.strictObject({ run_id: runIdSchema, ...signalRunBodySchema.shape }),
      outputSchema: outputOf(sentSignalSchema),
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    ({ run_id, ...sent }) =>
      toolAnswer('signal_run', logger, async () => ({ ...(await engine.signalRun(run_id, sent)) })),
  );

  server.registerTool(
    'list_agents',
    {
      title: 'List the agents',
      description: 'The agents a task may be submitted to, with what each does and its usage so far.',
      inputSchema: z.strictObject({}),
      outputSchema: outputOf(agentListSchema),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () => toolAnswer('list_agents', logger, () => listAgents(engine, options.agents)),
  );

  server.registerTool(
    'list_pending_questions',
    {
      title: 'List pending questions',
      description:
        'Every pending question and tool approval of every session, newest first (each: id, session_id, ' +
        'run_id, agent, kind, question, options, tool, created_at, root_run_id), at most `limit`; ' +
        '`truncated` when more are pending. Answer one with respond (its session_id and id).',
      inputSchema: z.strictObject({
        limit: z
          .number()
          .int()
          .min(1)
          .max(maxInboxLimit)
          .default(100)
          .describe(`How many questions at most (1 to ${maxInboxLimit}).`),
      }),
      outputSchema: outputOf(inboxSchema),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ limit }) => toolAnswer('list_pending_questions', logger, () => listPendingQuestions(engine, limit)),
  );

  const sessionIdSchema = z
    .string()
    .min(1)
    .max(200)
    .describe('The session id (ses_…) that submit_task returned.');
  const sessionReads = [
    [
      'get_session_state',
      'Read the state',
      "What the session's agents set on their state blackboard (key → value).",
      sessionStateSchema,
      sessionStateOf,
    ],
    [
      'list_session_tasks',
      'List the tasks',
      "The session's task board: every task with its status and who claimed it.",
      sessionTaskListSchema,
      sessionTasksOf,
    ],
    [
      'list_session_notes',
      'List the notes',
      "The session's notes: the shared ones and each agent's.",
      sessionNoteListSchema,
      sessionNotesOf,
    ],
  ] as const;
  for (const [name, title, description, output, read] of sessionReads) {
    server.registerTool(
      name,
      {
        title,
        description,
        inputSchema: z.strictObject({ session_id: sessionIdSchema }),
        outputSchema: outputOf(output as z.ZodObject<z.ZodRawShape>),
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      ({ session_id }) => toolAnswer(name, logger, () => read(engine, session_id)),
    );
  }

  return server;
}
