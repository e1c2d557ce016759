import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { TraceSettings } from './telemetry-settings.js';
import { otlpHttpTarget, traceResource } from './trace-resource.js';

/**
 * A tracer provider for spans that libraries start and end themselves (`@fastify/otel`'s request spans,
 * nothing else since BullMQ's queue spans have their own light tracer; decision 0024): the same OTLP/HTTP export and resource as the run spans,
 * random ids. Not registered globally.
 */
export function otlpTracerProvider(settings: TraceSettings, instanceId: string): TracerProvider {
  const exporter = new OTLPTraceExporter(otlpHttpTarget(settings));
  return new TracerProvider({
    resource: traceResource(settings, instanceId),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: settings.exportDelayMs })],
  });
}
