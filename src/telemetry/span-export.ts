import {
  convertLegacyHttpOptions,
  createOtlpHttpExportDelegate,
} from '@opentelemetry/otlp-exporter-base/node-http';
import type { TraceSettings } from './telemetry-settings.js';
import { otlpHttpTarget, traceResource } from './trace-resource.js';

/** An attribute's value, as spans carry it. */
export type AttributeValue =
  | string
  | number
  | boolean
  | readonly (string | number | boolean | null | undefined)[];
export type Attributes = Record<string, AttributeValue | undefined>;

interface OtlpValue {
  stringValue?: string;
  intValue?: number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values: OtlpValue[] };
}

export interface OtlpKeyValue {
  key: string;
  value: OtlpValue;
}

/** A span in the OTLP/JSON form the exporter sends (opentelemetry-proto's `Span`, JSON mapping). */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** `spanKind` below. */
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpKeyValue[];
  events: { name: string; timeUnixNano: string; attributes: OtlpKeyValue[] }[];
  links: { traceId: string; spanId: string; attributes: OtlpKeyValue[]; flags: number }[];
  status: { code: number; message?: string };
  flags: number;
}

/** OTLP's span kinds (one more than the API's enum). */
export const spanKind = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

/** OTLP's status codes. */
export const statusCode = { unset: 0, ok: 1, error: 2 } as const;

/** Span flags: sampled, and whether the parent's context was known to be remote (OTLP's `SpanFlags`). */
export function spanFlags(remoteParent: boolean): number {
  return remoteParent ? 0x301 : 0x101;
}

function otlpValue(value: AttributeValue): OtlpValue | undefined {
  switch (typeof value) {
    case 'string':
      return { stringValue: value };
    case 'boolean':
      return { boolValue: value };
    case 'number':
      // JSON has no NaN or Infinity: such a value is left out.
      if (!Number.isFinite(value)) return undefined;
      return Number.isInteger(value) ? { intValue: value } : { doubleValue: value };
    default: {
      const values: OtlpValue[] = [];
      for (const item of value) {
        if (item !== null && item !== undefined) values.push(otlpValue(item) ?? {});
      }
      return { arrayValue: { values } };
    }
  }
}

/** Attributes in OTLP's key/value list; undefined and non-finite values are left out. */
export function otlpAttributes(attributes: Attributes): OtlpKeyValue[] {
  const list: OtlpKeyValue[] = [];
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined) continue;
    const encoded = otlpValue(value);
    if (encoded) list.push({ key, value: encoded });
  }
  return list;
}

/** Milliseconds since the epoch (fractions kept to the microsecond) as OTLP's nanosecond string. */
export function unixNano(ms: number): string {
  return `${Math.round(ms * 1000)}000`;
}

/** What one export instance sends its spans as: the instrumentation scope. */
export interface SpanScope {
  name: string;
  version?: string;
  schemaUrl?: string;
}

const maxBatch = 512;
const maxQueued = 2048;

/**
 * Batches finished spans, already in OTLP/JSON form, and sends them with the OTel exporter's own OTLP/HTTP
 * transport (its endpoint and header variables, timeout, retries and concurrency limit). Building spans in
 * their wire form where they end, instead of as SDK span objects that a processor and a transformer convert,
 * is most of what telemetry costs a step (decision 0024). A span that does not fit the queue (2,048 waiting)
 * is dropped and counted; export failures are counted, never thrown at the step that produced the span.
 */
export class SpanExport {
  private queue: OtlpSpan[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly pending = new Set<Promise<void>>();
  private readonly delegate;
  private readonly resource: { attributes: OtlpKeyValue[] };
  private readonly scope: { name: string; version?: string };
  dropped = 0;
  failedExports = 0;

  constructor(
    private readonly settings: TraceSettings,
    instanceId: string,
    private readonly spanScope: SpanScope,
  ) {
    const resource = traceResource(settings, instanceId);
    this.resource = { attributes: otlpAttributes(resource.attributes as Attributes) };
    this.scope = spanScope.version
      ? { name: spanScope.name, version: spanScope.version }
      : { name: spanScope.name };
    const encoder = new TextEncoder();
    this.delegate = createOtlpHttpExportDelegate(
      convertLegacyHttpOptions(otlpHttpTarget(settings), 'TRACES', 'v1/traces', {
        'Content-Type': 'application/json',
      }),
      {
        serializeRequest: (spans: OtlpSpan[]) =>
          encoder.encode(
            JSON.stringify({
              resourceSpans: [
                {
                  resource: this.resource,
                  scopeSpans: [
                    {
                      scope: this.scope,
                      spans,
                      ...(this.spanScope.schemaUrl ? { schemaUrl: this.spanScope.schemaUrl } : {}),
                    },
                  ],
                },
              ],
            }),
          ),
        deserializeResponse: () => ({}),
      },
      'otlp_http_span_exporter',
      { name: 'span', countItems: (spans: OtlpSpan[]) => spans.length },
      undefined,
    );
  }

  add(span: OtlpSpan): void {
    if (this.queue.length >= maxQueued) {
      this.dropped += 1;
      return;
    }
    this.queue.push(span);
    if (this.queue.length >= maxBatch) this.sendQueued();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.sendQueued(), this.settings.exportDelayMs);
      this.timer.unref();
    }
  }

  /** Sends every span waiting and resolves when their exports have ended. */
  async flush(): Promise<void> {
    this.sendQueued();
    await Promise.allSettled([...this.pending]);
  }

  async close(): Promise<void> {
    await this.flush();
    await this.delegate.shutdown();
  }

  private sendQueued(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (this.queue.length > 0) {
      const batch = this.queue.length <= maxBatch ? this.queue : this.queue.slice(0, maxBatch);
      this.queue = this.queue.length <= maxBatch ? [] : this.queue.slice(maxBatch);
      const sent = new Promise<void>((resolve) => {
        this.delegate.export(batch, (result) => {
          if (result.code !== 0) this.failedExports += 1;
          resolve();
        });
      });
      this.pending.add(sent);
      void sent.then(() => this.pending.delete(sent));
    }
  }
}
