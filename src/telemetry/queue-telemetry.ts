import { AsyncLocalStorage } from 'node:async_hooks';
import { randomFillSync } from 'node:crypto';
import type {
  Attributes as BullAttributes,
  ContextManager,
  Exception,
  Span,
  SpanOptions,
  Telemetry,
  Tracer,
} from 'bullmq';
import { runSpanContext } from './run-span.js';
import {
  type Attributes,
  type OtlpSpan,
  otlpAttributes,
  SpanExport,
  spanFlags,
  statusCode,
  unixNano,
} from './span-export.js';
import type { TraceSettings } from './telemetry-settings.js';
import type { TracedRun } from './trace-ids.js';

/** What BullMQ's spans see as the current context: the span its work is under, if any. */
interface QueueContext {
  traceId?: string;
  spanId?: string;
  /** The context came from a job's metadata (another process's span). */
  remote?: boolean;
  /** The span of this process that the context is of, while it is open. */
  span?: QueueSpan;
}

const rootContext: QueueContext = Object.freeze({});
const traceparentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/** Random span and trace ids, drawn from a buffer filled 4 KiB at a time. */
class RandomIds {
  private readonly pool = Buffer.alloc(4096);
  private used = this.pool.length;

  hex(bytes: number): string {
    if (this.used + bytes > this.pool.length) {
      randomFillSync(this.pool);
      this.used = 0;
    }
    const hex = this.pool.toString('hex', this.used, this.used + bytes);
    this.used += bytes;
    return hex;
  }
}

const nowMs = () => performance.timeOrigin + performance.now();

/** BullMQ's kind of span that processes a job. */
const consumerKind = 4;

/** A span not sent: BullMQ's housekeeping outside any step (fetching the next job, the stalled-job check). */
const unsentSpan: Span<QueueContext> = {
  setSpanOnContext: (context) => context,
  setAttribute: () => undefined,
  setAttributes: () => undefined,
  addEvent: () => undefined,
  recordException: () => undefined,
  end: () => undefined,
};

/** One of BullMQ's spans, built into its OTLP form when it ends. */
class QueueSpan implements Span<QueueContext> {
  private readonly attributes: Attributes = {};
  private readonly events: OtlpSpan['events'] = [];
  private readonly links: OtlpSpan['links'] = [];
  private readonly startMs = nowMs();
  private error: string | undefined;
  private ended = false;

  constructor(
    private readonly spans: SpanExport,
    readonly name: string,
    readonly kind: number,
    readonly traceId: string,
    readonly spanId: string,
    private readonly parent: QueueContext,
  ) {}

  setSpanOnContext(): QueueContext {
    return { traceId: this.traceId, spanId: this.spanId, span: this };
  }

  setAttribute(key: string, value: BullAttributes[string]): void {
    this.attributes[key] = value;
  }

  setAttributes(attributes: BullAttributes): void {
    Object.assign(this.attributes, attributes);
  }

  addEvent(name: string, attributes?: BullAttributes): void {
    this.events.push({ name, timeUnixNano: unixNano(nowMs()), attributes: otlpAttributes(attributes ?? {}) });
  }

  recordException(exception: Exception): void {
    const error = typeof exception === 'string' ? { message: exception } : exception;
    this.error = error.message ?? error.name ?? String(error.code ?? 'error');
    this.addEvent('exception', {
      'exception.type': error.name ?? (error.code === undefined ? undefined : String(error.code)),
      'exception.message': error.message,
      'exception.stacktrace': error.stack,
    });
  }

  /** A link to a span in another trace (the run's, for a job whose `process` span began a trace of its own). */
  addLink(traceId: string, spanId: string): void {
    this.links.push({ traceId, spanId, attributes: [], flags: spanFlags(true) });
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.spans.add({
      traceId: this.traceId,
      spanId: this.spanId,
      ...(this.parent.spanId ? { parentSpanId: this.parent.spanId } : {}),
      name: this.name,
      kind: this.kind + 1,
      startTimeUnixNano: unixNano(this.startMs),
      endTimeUnixNano: unixNano(nowMs()),
      attributes: otlpAttributes(this.attributes),
      events: this.events,
      links: this.links,
      status:
        this.error === undefined
          ? { code: statusCode.unset }
          : { code: statusCode.error, message: this.error },
      flags: spanFlags(this.parent.remote === true),
    });
  }
}

/**
 * BullMQ's own queue spans (decision 0024): BullMQ's telemetry interface implemented here, its spans built in
 * OTLP form and sent as the run spans are (span-export.ts), with a context of BullMQ's own in an
 * AsyncLocalStorage: nothing global is installed. A step's processor runs with its run's `invoke_agent` span
 * as the current context (`withRun`): the jobs it adds are `add` spans in the run's trace, and the `process`
 * span of a job so added is their child (the context travels in the job's `opts.telemetry.metadata` as a W3C
 * `traceparent`, as BullMQ does it). A job added otherwise (a run's first step is written in one transaction
 * with its run) starts a `process` span of its own, which `withRun` links to the run's span. What BullMQ does
 * outside any step (fetching jobs, checking for stalled ones) is not sent.
 */
export class QueueTelemetry {
  readonly telemetry: Telemetry<QueueContext>;
  private readonly current = new AsyncLocalStorage<QueueContext>();
  private readonly spans: SpanExport;

  constructor(settings: TraceSettings, instanceId: string) {
    this.spans = new SpanExport(settings, instanceId, { name: 'bullmq' });
    const ids = new RandomIds();
    const current = this.current;
    const spans = this.spans;
    const contextManager: ContextManager<QueueContext> = {
      active: () => current.getStore() ?? rootContext,
      with: (context, fn) => current.run(context, fn),
      root: () => rootContext,
      getMetadata: (context) =>
        context.traceId && context.spanId
          ? JSON.stringify({ traceparent: `00-${context.traceId}-${context.spanId}-01` })
          : '{}',
      fromMetadata: (active, metadata) => {
        try {
          const { traceparent } = JSON.parse(metadata) as { traceparent?: unknown };
          const match = typeof traceparent === 'string' ? traceparentPattern.exec(traceparent) : null;
          return match ? { traceId: match[1], spanId: match[2], remote: true } : active;
        } catch {
          return active;
        }
      },
    };
    const tracer: Tracer<QueueContext> = {
      // BullMQ passes a context only when it has one from a job's metadata; otherwise the current one.
      startSpan: (name: string, options?: SpanOptions, context?: QueueContext) => {
        const parent = context ?? contextManager.active();
        const kind = options?.kind ?? 0;
        // Only a job's processing may begin a trace (a run's first step, written with its run); what BullMQ
        // does outside any step would be a trickle of one-span traces.
        if (parent.spanId === undefined && kind !== consumerKind) return unsentSpan;
        return new QueueSpan(spans, name, kind, parent.traceId ?? ids.hex(16), ids.hex(8), parent);
      },
    };
    this.telemetry = { tracer, contextManager };
  }

  /**
   * Runs a step's work with the run's span as the current context, after linking the job's `process` span
   * (current now) to it when that span is in another trace.
   */
  withRun<T>(run: TracedRun, work: () => Promise<T>): Promise<T> {
    const { traceId, spanId } = runSpanContext(run);
    const processSpan = this.current.getStore()?.span;
    if (processSpan) {
      processSpan.setAttribute('ratchet.run.id', run.id);
      if (processSpan.traceId !== traceId) processSpan.addLink(traceId, spanId);
    }
    return this.current.run({ traceId, spanId, remote: true }, work);
  }

  /** Sends what is waiting (on shutdown). */
  async close(): Promise<void> {
    await this.spans.close();
  }
}
