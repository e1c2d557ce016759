import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RatchetConfig } from '../config/index.js';
import { RunTracer, type TracedRun, telemetrySettings } from '../telemetry/index.js';
import type { ApiEngine } from './api-engine.js';

const runIdInBody = /"run_id":"(run_[0-9a-z]{16}_[0-9a-z]{10})"/;
/** A question's id names the step job that asked it, which starts with its run's id (ids.ts questionIdOf). */
const runIdInQuestion = /"question_id":"q-(run_[0-9a-z]{16}_[0-9a-z]{10})-/;

/**
 * With `telemetry.traces` on, each API request is a server span in its caller's trace (W3C `traceparent`);
 * a request that submits a run, or answers one's question, links to that run's span (decision 0024).
 */
export function installRequestTracing(
  app: FastifyInstance,
  options: { config: RatchetConfig; engine: Pick<ApiEngine, 'getRun'> },
): void {
  const settings = telemetrySettings(options.config.telemetry, process.env).traces;
  if (!settings) return;
  const tracer = new RunTracer(settings, { instanceId: randomUUID() });
  const started = new WeakMap<FastifyRequest, number>();
  const runs = new WeakMap<FastifyRequest, string>();
  app.addHook('onRequest', async (request) => {
    started.set(request, Date.now());
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode < 300 && typeof payload === 'string') {
      const runId = runIdInBody.exec(payload)?.[1] ?? runIdInQuestion.exec(payload)?.[1];
      if (runId) runs.set(request, runId);
    }
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    const runId = runs.get(request);
    let run: TracedRun | undefined;
    if (runId) {
      // A child run's trace is its root's: read which (only for requests that name a run).
      const view = await options.engine.getRun(runId).catch(() => undefined);
      run = { id: runId, root_run_id: view?.root_run_id ?? null };
    }
    const header = request.headers.traceparent;
    tracer.request({
      method: request.method,
      route: request.routeOptions.url ?? 'unknown route',
      path: request.url.split('?')[0] ?? '',
      status: reply.statusCode,
      startMs: started.get(request) ?? Date.now(),
      endMs: Date.now(),
      traceparent: typeof header === 'string' ? header : undefined,
      run,
    });
  });
  app.addHook('onClose', async () => {
    await tracer.close();
  });
}
