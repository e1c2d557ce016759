import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/index.js';
import { legacyProviderAttribute, providerNameOf } from '../../src/telemetry/semconv.js';
import { telemetrySettings } from '../../src/telemetry/telemetry-settings.js';
import { runParentSpanId, spanIdOf, traceIdOf } from '../../src/telemetry/trace-ids.js';

const root = { id: 'run_aaaaaaaaaaaaaaaa_0000000001', root_run_id: null };
const child = { id: 'run_aaaaaaaaaaaaaaaa_0000000002', root_run_id: root.id };

describe('trace ids', () => {
  it('puts a run tree in one trace, and a trace per tree', () => {
    expect(traceIdOf(root)).toMatch(/^[0-9a-f]{32}$/);
    expect(traceIdOf(child)).toBe(traceIdOf(root));
    expect(traceIdOf({ id: 'run_bbbbbbbbbbbbbbbb_0000000001', root_run_id: null })).not.toBe(traceIdOf(root));
  });

  it('names each span the same way in every process, and each execution of a model call apart', () => {
    const trace = traceIdOf(root);
    expect(spanIdOf.run(trace, root.id)).toMatch(/^[0-9a-f]{16}$/);
    expect(spanIdOf.run(trace, root.id)).toBe(spanIdOf.run(trace, root.id));
    const job = `${root.id}-i1`;
    expect(spanIdOf.modelCall(trace, job, 1, 'chat')).not.toBe(spanIdOf.modelCall(trace, job, 2, 'chat'));
    expect(spanIdOf.modelCall(trace, job, 1, 'chat')).not.toBe(spanIdOf.modelCall(trace, job, 1, 'summary'));
  });

  it("hangs a child run under the parent's tool call that started it, else under the parent run", () => {
    const trace = traceIdOf(root);
    const toolJob = `${root.id}-i2-t0`;
    expect(runParentSpanId(trace, { run_id: root.id, job_id: toolJob })).toBe(
      spanIdOf.toolCall(trace, toolJob),
    );
    expect(runParentSpanId(trace, { run_id: root.id, job_id: `${root.id}-i3` })).toBe(
      spanIdOf.run(trace, root.id),
    );
    expect(runParentSpanId(trace, null)).toBeUndefined();
  });
});

describe('telemetry settings', () => {
  const telemetry = (section: unknown) => configSchema.shape.telemetry.parse(section);

  it('is off by default', () => {
    expect(telemetrySettings(telemetry(undefined), {})).toEqual({ traces: undefined, metrics: undefined });
  });

  it('reads the config, then the standard variables over it', () => {
    const config = telemetry({ traces: { enabled: true, endpoint: 'http://collector:4318/v1/traces' } });
    expect(telemetrySettings(config, {}).traces).toMatchObject({
      endpoint: 'http://collector:4318/v1/traces',
      serviceName: 'ratchet',
      exportDelayMs: 1000,
      captureMessageContent: false,
      legacyProviderAttribute: true,
    });
    const env = {
      OTEL_SERVICE_NAME: 'svc',
      OTEL_BSP_SCHEDULE_DELAY: '250',
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
      OTEL_SEMCONV_STABILITY_OPT_IN: 'http, gen_ai_latest_experimental',
    };
    expect(telemetrySettings(config, env).traces).toMatchObject({
      serviceName: 'svc',
      exportDelayMs: 250,
      captureMessageContent: true,
      legacyProviderAttribute: false,
    });
    expect(telemetrySettings(config, { OTEL_SDK_DISABLED: 'true' }).traces).toBeUndefined();
    expect(telemetrySettings(telemetry({}), { OTEL_TRACES_EXPORTER: 'otlp' }).traces).toBeDefined();
  });

  it('refuses an endpoint that is not an http(s) URL', () => {
    expect(() => telemetry({ traces: { endpoint: 'collector:4318' } })).toThrow(/http/);
  });

  it('maps provider kinds to the conventions’ provider names', () => {
    expect(providerNameOf('gemini')).toBe('gcp.gemini');
    expect(providerNameOf('grok')).toBe('x_ai');
    expect(providerNameOf('anthropic')).toBe('anthropic');
    expect(legacyProviderAttribute(undefined)).toBe(true);
  });
});
