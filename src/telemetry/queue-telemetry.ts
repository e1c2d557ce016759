import { AsyncLocalStorage } from 'node:async_hooks';
import { type Context, ROOT_CONTEXT, type SpanOptions, TraceFlags, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { ContextManager, Telemetry } from 'bullmq';
import { BullMQOTelSpan, BullMQOtel } from 'bullmq-otel';
import { otlpTracerProvider } from './otlp-provider.js';
import { runSpanContext } from './run-span.js';
import type { TraceSettings } from './telemetry-settings.js';
import type { TracedRun } from './trace-ids.js';

const propagator = new W3CTraceContextPropagator();
const getter = {
  get: (carrier: Record<string, string>, key: string) => carrier[key],
  keys: (carrier: Record<string, string>) => Object.keys(carrier),
};
const setter = {
  set: (carrier: Record<string, string>, key: string, value: string) => (carrier[key] = value),
};

/**
 * BullMQ's own queue spans (`bullmq-otel`, decision 0024) on a tracer provider of the process's own, with a
 * context of BullMQ's own: nothing global is installed, so the run spans and this stay independent. A step's
 * processor runs with its run's `invoke_agent` span as the current context (`withRun`): the jobs it adds are
 * `add` spans in the run's trace, and the `process` span of a job so added is their child (the context travels
 * in the job's `opts.telemetry.metadata`, as BullMQ does it). A job added otherwise (a run's first step is
 * written in one transaction with its run) starts a `process` span of its own, which `withRun` links to the
 * run's span.
 */
export class QueueTelemetry {
  readonly telemetry: Telemetry<Context>;
  private readonly current = new AsyncLocalStorage<Context>();

  private readonly provider;

  constructor(settings: TraceSettings, instanceId: string) {
    this.provider = otlpTracerProvider(settings, instanceId);
    const bullmq = new BullMQOtel({ tracerName: 'bullmq' });
    const tracer = this.provider.getTracer('bullmq');
    const current = this.current;
    const contextManager: ContextManager<Context> = {
      active: () => current.getStore() ?? ROOT_CONTEXT,
      with: (context, fn) => current.run(context, fn),
      root: () => ROOT_CONTEXT,
      getMetadata: (context) => {
        const carrier: Record<string, string> = {};
        propagator.inject(context, carrier, setter);
        return JSON.stringify(carrier);
      },
      fromMetadata: (active, metadata) => {
        try {
          return propagator.extract(active, JSON.parse(metadata) as Record<string, string>, getter);
        } catch {
          return active;
        }
      },
    };
    this.telemetry = Object.assign(bullmq, {
      tracer: {
        // BullMQ passes a context only when it has one from a job's metadata; otherwise the OTel tracer would
        // read the global context, which a worker does not keep: the current one here is BullMQ's own.
        startSpan: (name: string, options: SpanOptions, context?: Context) =>
          new BullMQOTelSpan(tracer.startSpan(name, options, context ?? contextManager.active())),
      },
      contextManager,
    }) as unknown as Telemetry<Context>;
  }

  /**
   * Runs a step's work with the run's span as the current context, after linking the job's `process` span
   * (current now) to it when that span is in another trace.
   */
  withRun<T>(run: TracedRun, work: () => Promise<T>): Promise<T> {
    const { traceId, spanId } = runSpanContext(run);
    const runSpan = { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true };
    const processSpan = trace.getSpan(this.current.getStore() ?? ROOT_CONTEXT);
    if (processSpan) {
      processSpan.setAttribute('ratchet.run.id', run.id);
      if (processSpan.spanContext().traceId !== traceId) processSpan.addLink({ context: runSpan });
    }
    return this.current.run(trace.setSpanContext(ROOT_CONTEXT, runSpan), work);
  }

  /** Sends what is waiting (on shutdown). */
  async close(): Promise<void> {
    await this.provider.forceFlush();
    await this.provider.shutdown();
  }
}
