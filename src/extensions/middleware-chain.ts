import { RatchetError } from '../errors/index.js';
import type { ExtensionContext } from './context.js';
import {
  type ConfiguredMiddleware,
  isRefusal,
  type JsonValue,
  type ModelReply,
  type ModelRequest,
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
}

/** The chain's outcome: the reply (or result), or the refusal of the middleware named, and every decision. */
export type ChainOutcome<Reply> = (
  | { kind: 'reply'; reply: Reply }
  | { kind: 'refused'; by: string; reason: string }
) & { decisions: MiddlewareDecision[] };

interface Layer<Request, Reply> {
  name: string;
  options: unknown;
  around: (
    call: { request: Request; options: unknown; context: ExtensionContext; record(note: JsonValue): void },
    next: (request: Request) => Promise<Reply>,
  ) => Promise<Reply | Refusal>;
}

interface Shape<Request, Reply> {
  /** Whether the request a middleware passed on differs from the one it was given. */
  requestChanged(given: Request, passed: Request): boolean;
  routedTo?(given: Request, passed: Request): string | undefined;
  /** A middleware's reply is of the right shape (a bug in one is reported as its failure). */
  isReply(value: unknown): value is Reply;
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
  call: (request: ModelRequest) => Promise<ModelReply>,
  contextOf: (name: string) => ExtensionContext,
): Promise<ChainOutcome<ModelReply>> {
  const layers = layersOf(middleware, (definition) => definition.aroundModelCall?.bind(definition));
  return runChain(layers, modelShape, request, call, contextOf);
}

/** The tool call through the agent's middleware that wrap tool calls, in the order the agent lists them. */
export function runToolChain(
  middleware: readonly ConfiguredMiddleware[],
  request: ToolRequest,
  call: (request: ToolRequest) => Promise<ToolResult>,
  contextOf: (name: string) => ExtensionContext,
): Promise<ChainOutcome<ToolResult>> {
  const layers = layersOf(middleware, (definition) => definition.aroundToolCall?.bind(definition));
  return runChain(layers, toolShape, request, call, contextOf);
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

async function runChain<Request, Reply>(
  layers: readonly Layer<Request, Reply>[],
  shape: Shape<Request, Reply>,
  request: Request,
  call: (request: Request) => Promise<Reply>,
  contextOf: (name: string) => ExtensionContext,
): Promise<ChainOutcome<Reply>> {
  const decisions: MiddlewareDecision[] = layers.map((layer) => ({ name: layer.name }));
  // Errors that came out of `next` (the model, a tool, a refusal or failure further in): they pass through a
  // middleware that does not catch them; anything else a middleware throws is its own failure.
  const fromNext = new WeakSet<object>();
  const through = async (next: (request: Request) => Promise<Reply>, passed: Request): Promise<Reply> => {
    try {
      return await next(passed);
    } catch (error) {
      if (typeof error === 'object' && error !== null) fromNext.add(error);
      throw error;
    }
  };
  const chain = layers.reduceRight<(request: Request) => Promise<Reply>>(
    (next, layer, position) => async (given) => {
      const decision = decisions[position] as MiddlewareDecision;
      let fromInside: Reply | undefined;
      let outcome: Reply | Refusal;
      try {
        outcome = await layer.around(
          {
            request: given,
            options: layer.options,
            context: contextOf(layer.name),
            record: (note) => {
              decision.note = boundedNote(layer.name, note);
            },
          },
          async (passed) => {
            if (shape.requestChanged(given, passed)) decision.request_changed = true;
            const routed = shape.routedTo?.(given, passed);
            if (routed) decision.routed_to = routed;
            fromInside = await through(next, passed);
            return fromInside;
          },
        );
      } catch (error) {
        if (typeof error === 'object' && error !== null && fromNext.has(error)) throw error;
        throw middlewareFailed(layer.name, error);
      }
      if (isRefusal(outcome)) {
        const reason = outcome.refused.slice(0, maxRefusalChars);
        decision.refused = reason;
        throw new Refused(layer.name, reason);
      }
      if (!shape.isReply(outcome))
        throw middlewareFailed(layer.name, new Error('it returned neither a reply nor a refusal'));
      if (fromInside !== undefined && outcome !== fromInside) decision.reply_changed = true;
      return outcome;
    },
    call,
  );
  try {
    const reply = await chain(request);
    return { kind: 'reply', reply, decisions: decisions.filter(isDecision) };
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    return { kind: 'refused', by: error.by, reason: error.reason, decisions: decisions.filter(isDecision) };
  }
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
