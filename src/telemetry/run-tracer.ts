import {
  type Attributes,
  type Link,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
} from '@opentelemetry/api';
import { hrTimeDuration, millisToHrTime } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  defaultResource,
  detectResources,
  envDetector,
  type Resource,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import { BatchSpanProcessor, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace';
import type { Message, Part } from '../chat/index.js';
import { redactSecrets } from '../secrets/index.js';
import type { ModelCallReport, RunRecord, ToolCallReport } from '../workflows/index.js';
import { attribute, providerNameOf, ratchetAttribute, schemaUrl, semconvVersion } from './semconv.js';
import type { TraceSettings } from './telemetry-settings.js';
import { runParentSpanId, spanIdOf, type TracedRun, traceIdOf } from './trace-ids.js';

/** One finished span, built whole: its ids are derived (trace-ids.ts), never drawn at random. */
interface SpanData {
  name: string;
  kind: SpanKind;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  startMs: number;
  endMs: number;
  attributes: Attributes;
  error: string | undefined;
  events?: { name: string; atMs: number; attributes?: Attributes }[];
  links?: Link[];
}

/**
 * Emits the spans of runs (decision 0024): `invoke_agent {agent}` when a run's last commit is written,
 * `chat {model}` where a model call returns, `execute_tool {tool}` where a tool call's outcome is recorded.
 * Each is built finished, with ids derived from the run tree, and handed to a batching OTLP/HTTP exporter;
 * no context is kept between steps, so any worker emits any span of any run.
 */
export class RunTracer {
  private readonly processor: SpanProcessor;
  private readonly resource: Resource;
  private readonly scope = { name: 'ratchet', version: semconvVersion, schemaUrl };

  constructor(
    private readonly settings: TraceSettings,
    options: { instanceId: string; processor?: SpanProcessor },
  ) {
    this.resource = defaultResource()
      .merge(
        resourceFromAttributes({
          'service.name': settings.serviceName,
          'service.instance.id': options.instanceId,
          'process.pid': process.pid,
        }),
      )
      // OTEL_RESOURCE_ATTRIBUTES on top (OTEL_SERVICE_NAME is in settings.serviceName already).
      .merge(detectResources({ detectors: [envDetector] }));
    this.processor =
      options.processor ??
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({
          ...(settings.endpoint ? { url: settings.endpoint } : {}),
          ...(settings.headers ? { headers: settings.headers } : {}),
        }),
        scheduledDelayMillis: settings.exportDelayMs,
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
    const links: Link[] = [];
    if (record.origin) {
      // A retry or fork is a run of its own, in a trace of its own: linked to the run it continues.
      const origin = { id: record.origin.run_id, root_run_id: null };
      const originTrace = traceIdOf(origin);
      links.push({
        context: spanContext(originTrace, spanIdOf.run(originTrace, origin.id)),
        attributes: { 'ratchet.origin.kind': record.origin.kind },
      });
    }
    this.emit({
      name: `invoke_agent ${record.agent}`,
      kind: SpanKind.INTERNAL,
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
      kind: SpanKind.CLIENT,
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
      kind: SpanKind.INTERNAL,
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
    await this.processor.forceFlush();
    await this.processor.shutdown();
  }

  private emit(span: SpanData): void {
    const startTime = millisToHrTime(span.startMs);
    const endTime = millisToHrTime(Math.max(span.startMs, span.endMs));
    const readable: ReadableSpan = {
      name: span.name,
      kind: span.kind,
      spanContext: () => spanContext(span.traceId, span.spanId),
      ...(span.parentSpanId ? { parentSpanContext: spanContext(span.traceId, span.parentSpanId) } : {}),
      startTime,
      endTime,
      duration: hrTimeDuration(startTime, endTime),
      status:
        span.error === undefined
          ? { code: SpanStatusCode.UNSET }
          : { code: SpanStatusCode.ERROR, message: span.error },
      attributes: span.attributes,
      links: span.links ?? [],
      events: (span.events ?? []).map((event) => ({
        name: event.name,
        time: millisToHrTime(event.atMs),
        ...(event.attributes ? { attributes: event.attributes } : {}),
      })),
      ended: true,
      resource: this.resource,
      instrumentationScope: this.scope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
    this.processor.onEnd(readable);
  }
}

function spanContext(traceId: string, spanId: string): SpanContext {
  return { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: false };
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
