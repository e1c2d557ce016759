import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { TraceSettings } from './telemetry-settings.js';

/**
 * A tracer provider for spans that libraries start and end themselves (`@fastify/otel`'s request spans,
 * nothing else since BullMQ's queue spans have their own light tracer; decision 0024): the same OTLP/HTTP export and resource as the run spans,
 * random ids. Not registered globally.
 */
export function otlpTracerProvider(settings: TraceSettings, instanceId: string): TracerProvider {
  const resource = defaultResource()
    .merge(
      resourceFromAttributes({
        'service.name': settings.serviceName,
        'service.instance.id': instanceId,
        'process.pid': process.pid,
      }),
    )
    .merge(detectResources({ detectors: [envDetector] }));
  const exporter = new OTLPTraceExporter({
    ...(settings.endpoint ? { url: settings.endpoint } : {}),
    ...(settings.headers ? { headers: settings.headers } : {}),
  });
  return new TracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: settings.exportDelayMs })],
  });
}
