import type { Message, Part } from '../chat/index.js';
import { redactSecrets } from '../secrets/index.js';
import {
  continuationOf,
  type ModelCallReport,
  type RunRecord,
  type ToolCallReport,
} from '../workflows/index.js';
import { attribute, providerNameOf, ratchetAttribute, schemaUrl, semconvVersion } from './semconv.js';
import {
  type Attributes,
  otlpAttributes,
  SpanExport,
  spanFlags,
  spanKind,
  statusCode,
  unixNano,
} from './span-export.js';
import type { TraceSettings } from './telemetry-settings.js';
import { runParentSpanId, spanIdOf, type TracedRun, traceIdOf } from './trace-ids.js';

/** One finished span, built whole: its ids are derived (trace-ids.ts), never drawn at random. */
interface SpanData {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  startMs: number;
  endMs: number;
  attributes: Attributes;
  error: string | undefined;
  events?: { name: string; atMs: number; attributes?: Attributes }[];
  links?: { traceId: string; spanId: string; attributes: Attributes }[];
}

/**
 * Emits the spans of runs (decision 0024): `invoke_agent {agent}` when a run's last commit is written,
 * `chat {model}` where a model call returns, `execute_tool {tool}` where a tool call's outcome is recorded.
 * Each is built finished, with ids derived from the run tree, and handed to a batching OTLP/HTTP exporter;
 * no context is kept between steps, so any worker emits any span of any run.
 */
export class RunTracer {
  private readonly spans: SpanExport;

  constructor(
    private readonly settings: TraceSettings,
    options: { instanceId: string },
  ) {
    this.spans = new SpanExport(settings, options.instanceId, {
      name: 'ratchet',
      version: semconvVersion,
      schemaUrl,
    });
  }

  /** The trace and span a step's log lines name: the run's trace and its `invoke_agent` span. */
  logFields(run: TracedRun): { trace_id: string; span_id: string } {
    const traceId = traceIdOf(run);
    return { trace_id: traceId, span_id: spanIdOf.run(traceId, run.id) };
  }

  runEnded(record: RunRecord): void {
    const traceId = traceIdOf(record);
    const failed = record.status === 'failed';
    const links: NonNullable<SpanData['links']> = [];
    const continued = continuationOf(record);
    if (continued) {
      // A retry or fork is a run of its own, in a trace of its own: linked to the run it continues.
      const origin = { id: continued.run_id, root_run_id: null };
      const originTrace = traceIdOf(origin);
      links.push({
        traceId: originTrace,
        spanId: spanIdOf.run(originTrace, origin.id),
        attributes: { 'ratchet.origin.kind': continued.kind },
      });
    }
    this.emit({
      name: `invoke_agent ${record.agent}`,
      kind: spanKind.internal,
      traceId,
      spanId: spanIdOf.run(traceId, record.id),
      parentSpanId: runParentSpanId(traceId, record.parent),
      startMs: Date.parse(record.created_at),
      endMs: Date.parse(record.finished_at ?? record.updated_at),
      attributes: {
        [attribute.operationName]: 'invoke_agent',
        [attribute.agentName]: record.agent,
        [attribute.agentId]: record.id,
        [attribute.conversationId]: record.session_id,
        [attribute.inputTokens]: record.usage.input_tokens,
        [attribute.outputTokens]: record.usage.output_tokens,
        [ratchetAttribute.runId]: record.id,
        [ratchetAttribute.runStatus]: record.status,
        [ratchetAttribute.iteration]: record.iteration,
        [ratchetAttribute.costUsd]: record.cost_usd,
        ...(failed && record.error ? { [attribute.errorType]: record.error.code } : {}),
      },
      error: failed ? (record.error?.message ?? 'the run failed') : undefined,
      links,
    });
  }

  modelCall(call: ModelCallReport): void {
    const traceId = traceIdOf(call.run);
    const provider = providerNameOf(call.provider.kind);
    const attributes: Attributes = {
      [attribute.operationName]: 'chat',
      [attribute.providerName]: provider,
      ...(this.settings.legacyProviderAttribute ? { [attribute.system]: provider } : {}),
      [attribute.agentName]: call.agent,
      [attribute.agentId]: call.run.id,
      [attribute.conversationId]: call.run.session_id,
      [attribute.requestModel]: call.provider.model,
      [ratchetAttribute.provider]: call.provider.name,
      [ratchetAttribute.iteration]: call.iteration,
      [ratchetAttribute.attempt]: call.attempt,
      [ratchetAttribute.purpose]: call.purpose,
    };
    if (call.usage) {
      // The providers report no model of their own here: the configured one answered.
      attributes[attribute.responseModel] = call.provider.model;
      attributes[attribute.inputTokens] = call.usage.input_tokens;
      attributes[attribute.outputTokens] = call.usage.output_tokens;
    }
    if (call.costUsd !== undefined) attributes[ratchetAttribute.costUsd] = call.costUsd;
    if (call.errorCode) attributes[attribute.errorType] = call.errorCode;
    if (this.settings.captureMessageContent) {
      attributes[attribute.inputMessages] = redactSecrets(JSON.stringify(call.messages.map(messageContent)));
      if (call.reply)
        attributes[attribute.outputMessages] = redactSecrets(
          JSON.stringify([{ role: 'assistant', parts: call.reply.map(partContent) }]),
        );
    }
    this.emit({
      name: `chat ${call.provider.model}`,
      kind: spanKind.client,
      traceId,
      spanId: spanIdOf.modelCall(traceId, call.jobId, call.started, call.purpose),
      parentSpanId: spanIdOf.run(traceId, call.run.id),
      startMs: call.startMs,
      endMs: call.endMs,
      attributes: { ...attributes, ...repeatAttributes(call.repeat) },
      error: call.errorCode,
      events: repeatEvents(call.repeat, call.startMs),
    });
  }

  toolCall(call: ToolCallReport): void {
    const traceId = traceIdOf(call.run);
    const attributes: Attributes = {
      [attribute.operationName]: 'execute_tool',
      [attribute.agentName]: call.agent,
      [attribute.agentId]: call.run.id,
      [attribute.conversationId]: call.run.session_id,
      // A name the model made up is bounded here and kept out of the span's name.
      [attribute.toolName]: call.toolKnown ? call.toolName : call.toolName.slice(0, 128),
      [attribute.toolCallId]: call.toolCallId,
      [attribute.toolType]: 'function',
      [ratchetAttribute.iteration]: call.iteration,
      ...(call.isError ? { [attribute.errorType]: 'tool_error' } : {}),
    };
    if (this.settings.captureMessageContent) {
      attributes[attribute.toolArguments] = redactSecrets(call.arguments);
      attributes[attribute.toolResult] = redactSecrets(call.result);
    }
    this.emit({
      name: call.toolKnown ? `execute_tool ${call.toolName}` : 'execute_tool',
      kind: spanKind.internal,
      traceId,
      spanId: spanIdOf.toolCall(traceId, call.jobId),
      parentSpanId: spanIdOf.run(traceId, call.run.id),
      startMs: call.startMs,
      endMs: call.endMs,
      attributes: { ...attributes, ...repeatAttributes(call.repeat) },
      error: call.isError ? 'the tool call returned an error' : undefined,
      events: repeatEvents(call.repeat, call.startMs),
    });
  }

  /** Sends what is waiting (on shutdown). */
  async close(): Promise<void> {
    await this.spans.close();
  }

  private emit(span: SpanData): void {
    this.spans.add({
      traceId: span.traceId,
      spanId: span.spanId,
      ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
      name: span.name,
      kind: span.kind,
      startTimeUnixNano: unixNano(span.startMs),
      endTimeUnixNano: unixNano(Math.max(span.startMs, span.endMs)),
      attributes: otlpAttributes(span.attributes),
      events: (span.events ?? []).map((event) => ({
        name: event.name,
        timeUnixNano: unixNano(event.atMs),
        attributes: otlpAttributes(event.attributes ?? {}),
      })),
      links: (span.links ?? []).map((link) => ({
        traceId: link.traceId,
        spanId: link.spanId,
        attributes: otlpAttributes(link.attributes),
        flags: spanFlags(false),
      })),
      status:
        span.error === undefined
          ? { code: statusCode.unset }
          : { code: statusCode.error, message: span.error },
      flags: spanFlags(false),
    });
  }
}

function repeatAttributes(repeat: ModelCallReport['repeat']): Attributes {
  return repeat ? { [ratchetAttribute.repeat]: true, [ratchetAttribute.repeatCause]: repeat } : {};
}

function repeatEvents(repeat: ModelCallReport['repeat'], atMs: number) {
  return repeat
    ? [{ name: 'ratchet.repeat', atMs, attributes: { [ratchetAttribute.repeatCause]: repeat } }]
    : [];
}

/** A chat message as the GenAI conventions' input messages put it: role and parts. */
function messageContent(message: Message) {
  return { role: message.role, parts: message.parts.map(partContent) };
}

function partContent(part: Part) {
  switch (part.type) {
    case 'text':
      return { type: 'text', content: part.text };
    case 'tool_call':
      return { type: 'tool_call', id: part.id, name: part.name, arguments: part.arguments };
    case 'tool_result':
      return { type: 'tool_call_response', id: part.tool_call_id, response: part.content };
    default:
      return { type: part.type };
  }
}
