import type { Logger } from 'pino';
import { RatchetError, untilAborted } from '../errors/index.js';
import { lazyChild } from '../log/index.js';
import type { ExtensionContext } from './context.js';
import {
  type AnswerRejection,
  type ConfiguredMiddleware,
  isAnswerRejection,
  isRefusal,
  type JsonValue,
  type ModelReply,
  type ModelRequest,
  type NextOptions,
  type Refusal,
  type ToolRequest,
  type ToolResult,
} from './middleware.js';

/** The most characters of JSON a middleware's note may hold (rule 15: every size from outside is bounded). */
export const maxNoteChars = 4_000;
/** The most characters of a refusal's reason that are kept. */
export const maxRefusalChars = 2_000;

/**
 * What one middleware decided in one call, as the step's commit records it: the note it recorded, whether it
 * changed the request or the reply, where it routed the request, its refusal.
 */
export interface MiddlewareDecision {
  name: string;
  note?: JsonValue;
  request_changed?: true;
  reply_changed?: true;
  /** The provider the request left this middleware for, when it changed it. */
  routed_to?: string;
  refused?: string;
  /** Why it rejected the final answer (sent back to the model, or the run's failure). */
  rejected?: string;
}

/** A final answer rejected by the middleware named: the reply it rejected, the reason and the retries allowed. */
export interface ChainRejection<Reply> {
  kind: 'rejected';
  by: string;
  /** The name the answer_rejected event gives the check (the middleware's, unless it named another). */
  check: string;
  reason: string;
  maxRetries: number;
  reply: Reply;
}

/**
 * The chain's outcome: the reply (or result), the refusal of the middleware named, or (around a model call)
 * its rejection of the final answer; and every decision.
 */
export type ChainOutcome<Reply> = (
  | { kind: 'reply'; reply: Reply }
  | { kind: 'refused'; by: string; reason: string }
  | ChainRejection<Reply>
) & { decisions: MiddlewareDecision[] };

/** What the chain is given besides the request: the step's signal and logger. */
export interface ChainBase {
  signal: AbortSignal;
  logger: Logger;
}

/** A call at the end of the chain: the model or the tool, with the signal it must honour. */
export type ChainEnd<Request, Reply> = (request: Request, signal: AbortSignal) => Promise<Reply>;

interface LayerCall<Request> {
  request: Request;
  options: unknown;
  context: ExtensionContext;
  signal: AbortSignal;
  logger: Logger;
  record(note: JsonValue): void;
}

interface Layer<Request, Reply> {
  name: string;
  options: unknown;
  around: (
    call: LayerCall<Request>,
    next: (request: Request, options?: NextOptions) => Promise<Reply>,
  ) => Promise<Reply | Refusal | AnswerRejection>;
}

interface Shape<Request, Reply> {
  /** Whether the request a middleware passed on differs from the one it was given. */
  requestChanged(given: Request, passed: Request): boolean;
  routedTo?(given: Request, passed: Request): string | undefined;
  /** A middleware's reply is of the right shape (a bug in one is reported as its failure). */
  isReply(value: unknown): value is Reply;
  /** Why this reply cannot be rejected as a final answer (undefined: it can); absent: nothing can. */
  unrejectable?(reply: Reply): string | undefined;
}

const modelShape: Shape<ModelRequest, ModelReply> = {
  requestChanged: (given, passed) =>
    given.messages !== passed.messages || given.tools !== passed.tools || given.options !== passed.options,
  routedTo: (given, passed) => (given.provider === passed.provider ? undefined : passed.provider),
  isReply: (value): value is ModelReply =>
    typeof value === 'object' &&
    value !== null &&
    Array.isArray((value as ModelReply).parts) &&
    typeof (value as ModelReply).usage === 'object',
  unrejectable: (reply) =>
    reply.parts.some((part) => part.type === 'tool_call')
      ? 'it rejected a reply with tool calls (rejectAnswer is for final answers; refuse() refuses a reply)'
      : undefined,
};

const toolShape: Shape<ToolRequest, ToolResult> = {
  requestChanged: (given, passed) => given.arguments !== passed.arguments || given.name !== passed.name,
  isReply: (value): value is ToolResult =>
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ToolResult).content === 'string' &&
    typeof (value as ToolResult).isError === 'boolean',
};

/** The model call through the agent's middleware that wrap model calls, in the order the agent lists them. */
export function runModelChain(
  middleware: readonly ConfiguredMiddleware[],
  request: ModelRequest,
  call: ChainEnd<ModelRequest, ModelReply>,
  contextOf: (name: string) => ExtensionContext,
  base: ChainBase,
): Promise<ChainOutcome<ModelReply>> {
  const layers = layersOf(middleware, (definition) => definition.aroundModelCall?.bind(definition));
  return runChain(layers, modelShape, request, call, contextOf, base);
}

/** The tool call through the agent's middleware that wrap tool calls, in the order the agent lists them. */
export function runToolChain(
  middleware: readonly ConfiguredMiddleware[],
  request: ToolRequest,
  call: ChainEnd<ToolRequest, ToolResult>,
  contextOf: (name: string) => ExtensionContext,
  base: ChainBase,
): Promise<ChainOutcome<ToolResult>> {
  const layers = layersOf(middleware, (definition) => definition.aroundToolCall?.bind(definition));
  return runChain(layers, toolShape, request, call, contextOf, base);
}

/** The layers of the middleware that wrap this kind of call (`around` picks the hook), in order. */
function layersOf<Request, Reply>(
  middleware: readonly ConfiguredMiddleware[],
  around: (definition: ConfiguredMiddleware['definition']) => Layer<Request, Reply>['around'] | undefined,
): Layer<Request, Reply>[] {
  return middleware.flatMap(({ definition, options }) => {
    const hook = around(definition);
    return hook ? [{ name: definition.name, options, around: hook }] : [];
  });
}

/** Thrown through the chain by a layer's refusal, so the layers outside it see `next` fail. */
class Refused extends Error {
  constructor(
    readonly by: string,
    readonly reason: string,
  ) {
    super(`refused by middleware "${by}": ${reason}`);
  }
}

/** Thrown through the chain by a layer's rejection of the final answer, carrying the answer it rejected. */
class Rejected<Reply> extends Error {
  constructor(readonly rejection: ChainRejection<Reply>) {
    super(`the final answer was rejected by middleware "${rejection.by}": ${rejection.reason}`);
  }
}

type Link<Request, Reply> = (request: Request, signal: AbortSignal) => Promise<Reply>;

async function runChain<Request, Reply>(
  layers: readonly Layer<Request, Reply>[],
  shape: Shape<Request, Reply>,
  request: Request,
  call: ChainEnd<Request, Reply>,
  contextOf: (name: string) => ExtensionContext,
  base: ChainBase,
): Promise<ChainOutcome<Reply>> {
  const decisions: MiddlewareDecision[] = layers.map((layer) => ({ name: layer.name }));
  // Errors that came out of `next` (the model, a tool, a refusal or failure further in): they pass through a
  // middleware that does not catch them; anything else a middleware throws is its own failure.
  const fromNext = new WeakSet<object>();
  // Each layer, and the rest of the chain each `next` calls, is raced against the signal it was given: a
  // middleware (or a model, a tool) that never settles and ignores its signal cannot hold the step past a
  // cancel, the run's deadline, a shutdown or an outer middleware's own limit (the built-in `timeout`).
  const chain = layers.reduceRight<Link<Request, Reply>>(
    (next, layer, position) => async (given, signal) => {
      const decision = decisions[position] as MiddlewareDecision;
      let fromInside: Reply | undefined;
      let outcome: Reply | Refusal | AnswerRejection;
      try {
        const around = layer.around(
          {
            request: given,
            options: layer.options,
            context: contextOf(layer.name),
            signal,
            // Bound on first use: most middleware never log.
            logger: lazyChild(base.logger, () => ({ middleware: layer.name })),
            record: (note) => {
              decision.note = boundedNote(layer.name, note);
            },
          },
          async (passed, options) => {
            if (shape.requestChanged(given, passed)) decision.request_changed = true;
            const routed = shape.routedTo?.(given, passed);
            if (routed) decision.routed_to = routed;
            const inner = options?.signal ? AbortSignal.any([signal, options.signal]) : signal;
            try {
              fromInside = await untilAborted(next(passed, inner), inner);
            } catch (error) {
              if (typeof error === 'object' && error !== null) fromNext.add(error);
              throw error;
            }
            return fromInside;
          },
        );
        // A middleware written without async may return its outcome as is.
        outcome = await untilAborted(Promise.resolve(around), signal);
      } catch (error) {
        // The step stopped (cancel, deadline, shutdown) while this layer ran: its signal's reason goes out as
        // is, whatever the layer did, so the step ends the way its signal says.
        if (signal.aborted) throw signal.reason;
        // What came out of next passes; so does an error with a Ratchet code (a built-in's own, such as the
        // timeout's model_timeout, retried by the step's policy).
        if (typeof error === 'object' && error !== null && fromNext.has(error)) throw error;
        if (error instanceof RatchetError) throw error;
        throw middlewareFailed(layer.name, error);
      }
      if (isRefusal(outcome)) {
        const reason = outcome.refused.slice(0, maxRefusalChars);
        decision.refused = reason;
        throw new Refused(layer.name, reason);
      }
      if (isAnswerRejection(outcome)) throw rejectionOf(layer.name, outcome, fromInside, shape, decision);
      if (!shape.isReply(outcome))
        throw middlewareFailed(layer.name, new Error('it returned neither a reply nor a refusal'));
      if (fromInside !== undefined && outcome !== fromInside) decision.reply_changed = true;
      return outcome;
    },
    call,
  );
  try {
    const reply = await chain(request, base.signal);
    return { kind: 'reply', reply, decisions: decisions.filter(isDecision) };
  } catch (error) {
    if (error instanceof Rejected) {
      return { ...(error.rejection as ChainRejection<Reply>), decisions: decisions.filter(isDecision) };
    }
    if (!(error instanceof Refused)) throw error;
    return { kind: 'refused', by: error.by, reason: error.reason, decisions: decisions.filter(isDecision) };
  }
}

/** A layer's rejection of the answer it was given by `next`, or its failure when it may not reject it. */
function rejectionOf<Request, Reply>(
  name: string,
  outcome: AnswerRejection,
  fromInside: Reply | undefined,
  shape: Shape<Request, Reply>,
  decision: MiddlewareDecision,
): Error {
  const why =
    fromInside === undefined
      ? 'it rejected an answer without calling next (refuse() refuses the request)'
      : shape.unrejectable
        ? shape.unrejectable(fromInside)
        : 'a tool result is not an answer to reject (refuse() refuses it)';
  if (why !== undefined || fromInside === undefined) return middlewareFailed(name, new Error(why));
  const reason = outcome.rejected.slice(0, maxRefusalChars);
  decision.rejected = reason;
  return new Rejected({
    kind: 'rejected',
    by: name,
    check: outcome.check ?? name,
    reason,
    maxRetries: outcome.maxRetries,
    reply: fromInside,
  });
}

/** A decision worth recording: the middleware changed, routed, refused or noted something. */
function isDecision(decision: MiddlewareDecision): boolean {
  return Object.keys(decision).length > 1;
}

function boundedNote(name: string, note: JsonValue): JsonValue {
  let text: string | undefined;
  try {
    text = JSON.stringify(note);
  } catch (error) {
    throw middlewareFailed(name, error);
  }
  if (text === undefined) throw middlewareFailed(name, new Error('its note is not JSON'));
  if (text.length > maxNoteChars) {
    throw middlewareFailed(
      name,
      new Error(`its note has ${text.length} characters of JSON, over the limit of ${maxNoteChars}`),
    );
  }
  return JSON.parse(text) as JsonValue;
}

/** A middleware's own failure: the step fails (not retried: the same code would throw again). */
export function middlewareFailed(name: string, error: unknown): RatchetError {
  const why = error instanceof Error ? error.message : String(error);
  return new RatchetError('middleware_failed', `middleware "${name}" failed: ${why}`, {
    ...(error instanceof Error ? { cause: error } : {}),
  });
}
