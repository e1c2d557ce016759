import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP JSON export carries it, its attributes flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  events: { name: string; attributes: Record<string, string | number | boolean> }[];
  links: { traceId: string; spanId: string }[];
  status: { code?: number; message?: string };
  resource: Record<string, string | number | boolean>;
  scope: { name?: string; version?: string };
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}

function flatten(attributes: { key: string; value: OtlpValue }[] | undefined) {
  const flat: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes ?? []) {
    if (value.stringValue !== undefined) flat[key] = value.stringValue;
    else if (value.intValue !== undefined) flat[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) flat[key] = value.doubleValue;
    else if (value.boolValue !== undefined) flat[key] = value.boolValue;
  }
  return flat;
}

/**
 * An OTLP/HTTP traces endpoint in the test process: decodes the JSON exports the workers send to
 * `/v1/traces` and keeps every span, with the headers of each request.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** BullMQ's spans (instrumentation scope `bullmq`), kept apart from `spans`. */
  readonly queueSpans: ReceivedSpan[] = [];
  readonly requestHeaders: Record<string, string | string[] | undefined>[] = [];
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.url !== '/v1/traces' || request.method !== 'POST') {
          response.writeHead(404).end();
          return;
        }
        this.requestHeaders.push(request.headers);
        this.accept(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}/v1/traces`;
  }

  private accept(body: {
    resourceSpans?: {
      resource?: { attributes?: { key: string; value: OtlpValue }[] };
      scopeSpans?: { scope?: { name?: string; version?: string }; spans?: Record<string, unknown>[] }[];
    }[];
  }): void {
    for (const resourceSpans of body.resourceSpans ?? []) {
      const resource = flatten(resourceSpans.resource?.attributes);
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          const raw = span as {
            traceId: string;
            spanId: string;
            parentSpanId?: string;
            name: string;
            kind: number;
            startTimeUnixNano: string | number;
            endTimeUnixNano: string | number;
            attributes?: { key: string; value: OtlpValue }[];
            events?: { name: string; attributes?: { key: string; value: OtlpValue }[] }[];
            links?: { traceId: string; spanId: string }[];
            status?: { code?: number; message?: string };
          };
          // BullMQ's own spans (scope `bullmq`) apart: the run and request spans are what most tests count.
          (scopeSpans.scope?.name === 'bullmq' ? this.queueSpans : this.spans).push({
            traceId: raw.traceId,
            spanId: raw.spanId,
            parentSpanId: raw.parentSpanId ? raw.parentSpanId : undefined,
            name: raw.name,
            kind: raw.kind,
            startMs: Number(BigInt(raw.startTimeUnixNano) / 1_000_000n),
            endMs: Number(BigInt(raw.endTimeUnixNano) / 1_000_000n),
            attributes: flatten(raw.attributes),
            events: (raw.events ?? []).map((event) => ({
              name: event.name,
              attributes: flatten(event.attributes),
            })),
            links: (raw.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
            status: raw.status ?? {},
            resource,
            scope: scopeSpans.scope ?? {},
          });
        }
      }
    }
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
