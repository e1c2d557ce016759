import {
  defaultResource,
  detectResources,
  envDetector,
  type Resource,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import type { TraceSettings } from './telemetry-settings.js';

/**
 * What every span this process exports says of its source, the run spans and the request spans alike: the
 * service, this instance and process, and OTEL_RESOURCE_ATTRIBUTES on top (OTEL_SERVICE_NAME is in
 * settings.serviceName already).
 */
export function traceResource(settings: TraceSettings, instanceId: string): Resource {
  return defaultResource()
    .merge(
      resourceFromAttributes({
        'service.name': settings.serviceName,
        'service.instance.id': instanceId,
        'process.pid': process.pid,
      }),
    )
    .merge(detectResources({ detectors: [envDetector] }));
}

/** Where spans go over OTLP/HTTP: the configured endpoint and headers, else the exporter's own env variables. */
export function otlpHttpTarget(settings: TraceSettings): { url?: string; headers?: Record<string, string> } {
  return {
    ...(settings.endpoint ? { url: settings.endpoint } : {}),
    ...(settings.headers ? { headers: settings.headers } : {}),
  };
}
