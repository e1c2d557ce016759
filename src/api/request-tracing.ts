import { randomUUID } from 'node:crypto';
import FastifyOtel from '@fastify/otel';
import { propagation, type Span, TraceFlags } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { type FastifyInstance, LogController } from 'fastify';
import type { RatchetConfig } from '../config/index.js';
import { RunTracer, runSpanContext, telemetrySettings } from '../telemetry/index.js';
import { otlpTracerProvider } from '../telemetry/otlp-provider.js';
import type { ApiEngine } from './api-engine.js';

const runIdInBody = /"run_id":"(run_[0-9a-z]{16}_[0-9a-z]{10})"/;
/** A question's id names the step job that asked it, which starts with its run's id (ids.ts questionIdOf). */
const runIdInQuestion = /"question_id":"q-(run_[0-9a-z]{16}_[0-9a-z]{10})-/;
/** A cancel answers with the run (`id`), not a `run_id`: the run is the route's. */
const cancelRoute = '/v1/runs/:id/cancel';

/**
 * With `telemetry.traces` on, each API request is a server span (`@fastify/otel`) in its caller's trace
 * (W3C `traceparent`); a request that submits a run, or answers one's question, links to that run's span,
 * and the request's log lines carry the span's `trace_id` and `span_id` (decision 0024). A run cancelled
 * here gets its `invoke_agent` span from here. Off, nothing is installed.
 */
/** Whether the API traces its requests (then its server takes a `TracedLogController`). */
export function requestsTraced(config: RatchetConfig): boolean {
  return telemetrySettings(config.telemetry, process.env).traces !== undefined;
}

/**
 * Fastify's request log lines but its `incoming request`, which it writes before any hook runs, so without
 * the request's trace and span ids: `installRequestTracing` writes that line once the span exists. The rest
 * (`request completed`, errors) go to the reply's logger, which carries the ids by then.
 */
export class TracedLogController extends LogController {
  override incomingRequest(): void {}
}

export function installRequestTracing(
  app: FastifyInstance,
  options: { config: RatchetConfig; engine: Pick<ApiEngine, 'getRun' | 'onRunCancelled'> },
): void {
  const settings = telemetrySettings(options.config.telemetry, process.env).traces;
  if (!settings) return;
  const instanceId = randomUUID();
  const runs = new RunTracer(settings, { instanceId });
  // No worker writes the end of a run cancelled here: its `invoke_agent` span is emitted by the API,
  // once (only the cancellation whose write finished the run is reported).
  const stopCancellations = options.engine.onRunCancelled((record) => runs.runEnded(record));

  const provider = otlpTracerProvider(settings, instanceId);
  // How `@fastify/otel` reads a caller's `traceparent`: the process's global propagator (traces on only).
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const instrumentation = new FastifyOtel.FastifyOtelInstrumentation({
    // One span per request: spans per hook and handler would cost more than the request.
    instrumentHooks: false,
    instrumentHandler: false,
    requestHook: (span, request) => {
      span.updateName(`${request.method} ${request.routeOptions.url ?? 'unknown route'}`);
      span.setAttribute('url.path', request.url.split('?')[0] ?? '');
    },
  });
  instrumentation.setTracerProvider(provider);
  // Applied now, not through app.register (which runs after every hook added here): the request span must
  // start before the guards so a refused request is traced too. The plugin skips encapsulation anyway.
  instrumentation.plugin()(app, {}, (error) => {
    if (error) throw error;
  });
  app.addHook('onRequest', async (request, reply) => {
    const { span } = request.opentelemetry();
    if (!span) {
      request.log.info({ req: request }, 'incoming request');
      return;
    }
    const { traceId, spanId } = span.spanContext();
    const log = request.log.child({ trace_id: traceId, span_id: spanId });
    request.log = log;
    reply.log = log;
    log.info({ req: request }, 'incoming request');
    // A hijacked reply (an event stream) skips the onSend hook that ends the span: end it when the
    // response closes. For any other request this comes after that end, and an ended span ignores it.
    reply.raw.once('close', () => {
      span.setAttribute('http.response.status_code', reply.raw.statusCode);
      span.end();
    });
  });
  app.addHook('onSend', async (request, reply, payload) => {
    const { span } = request.opentelemetry();
    if (span && reply.statusCode < 300 && typeof payload === 'string') {
      const runId =
        runIdInBody.exec(payload)?.[1] ??
        runIdInQuestion.exec(payload)?.[1] ??
        (request.routeOptions.url === cancelRoute ? (request.params as { id?: string }).id : undefined);
      if (runId) await linkToRun(span, options.engine, runId);
    }
    return payload;
  });
  app.addHook('onClose', async () => {
    stopCancellations();
    await runs.close();
    await provider.forceFlush();
    await provider.shutdown();
  });
}

/** Links the request's span to the run's `invoke_agent` span (in the run's own trace). */
async function linkToRun(span: Span, engine: Pick<ApiEngine, 'getRun'>, runId: string): Promise<void> {
  // A child run's trace is its root's: read which (only for requests that name a run).
  const view = await engine.getRun(runId).catch(() => undefined);
  const { traceId, spanId } = runSpanContext({ id: runId, root_run_id: view?.root_run_id ?? null });
  span.addLink({ context: { traceId, spanId, traceFlags: TraceFlags.SAMPLED } });
  span.setAttribute('ratchet.run.id', runId);
}
