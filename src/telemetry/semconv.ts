/**
 * The OpenTelemetry semantic conventions the spans follow, pinned (decision 0024): the GenAI conventions are
 * still in development, so names may change between versions; these are those of 1.37.0.
 */
export const semconvVersion = '1.37.0';
export const schemaUrl = `https://opentelemetry.io/schemas/${semconvVersion}`;

export const attribute = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  /** The name of the provider before 1.37.0 (see legacyProviderAttribute). */
  system: 'gen_ai.system',
  agentName: 'gen_ai.agent.name',
  agentId: 'gen_ai.agent.id',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  errorType: 'error.type',
} as const;

/** Ratchet's own attributes, beside the conventions'. */
export const ratchetAttribute = {
  /** Set on a model or tool call that an earlier execution of the same step had already started. */
  repeat: 'ratchet.repeat',
  /** Why it was repeated: `takeover` (the worker died or stalled) or `retry` (the attempt failed). */
  repeatCause: 'ratchet.repeat.cause',
  runId: 'ratchet.run.id',
  runStatus: 'ratchet.run.status',
  iteration: 'ratchet.iteration',
  attempt: 'ratchet.attempt',
  provider: 'ratchet.provider',
  purpose: 'ratchet.model_call.purpose',
  costUsd: 'ratchet.cost_usd',
} as const;

/**
 * `gen_ai.provider.name` of a provider kind: the conventions' well-known values, else the kind itself.
 */
export function providerNameOf(kind: string): string {
  switch (kind) {
    case 'gemini':
      return 'gcp.gemini';
    case 'grok':
      return 'x_ai';
    default:
      return kind;
  }
}

/**
 * OTEL_SEMCONV_STABILITY_OPT_IN: `gen_ai_latest_experimental` asks for the latest experimental GenAI
 * conventions alone. Without it, spans carry the name the provider had before 1.37.0 (`gen_ai.system`)
 * beside the current one, so a backend built on the older conventions still reads them.
 */
export function legacyProviderAttribute(optIn: string | undefined): boolean {
  const values = (optIn ?? '').split(',').map((value) => value.trim());
  return !values.includes('gen_ai_latest_experimental');
}
