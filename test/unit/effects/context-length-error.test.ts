import { APICallError } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { RatchetError } from '../../../src/errors/index.js';
import { providerErrorOf } from '../../../src/models/providers/provider-error.js';
import { isContextLengthError } from '../../../src/workflows/core/effects/index.js';

function apiError(statusCode: number, body: unknown, message: string): APICallError {
  return new APICallError({
    message,
    url: 'https://provider.test/v1',
    requestBodyValues: {},
    statusCode,
    responseBody: JSON.stringify(body),
    data: body,
  });
}

const openAi = apiError(
  400,
  {
    error: {
      message:
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 " +
        'tokens. Please reduce the length of the messages.',
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  },
  "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens.",
);
const anthropic = apiError(
  400,
  {
    type: 'error',
    error: { type: 'invalid_request_error', message: 'prompt is too long: 208310 tokens > 200000 maximum' },
  },
  'prompt is too long: 208310 tokens > 200000 maximum',
);
const gemini = apiError(
  400,
  {
    error: {
      code: 400,
      message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).',
      status: 'INVALID_ARGUMENT',
    },
  },
  'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).',
);

describe('context-length errors', () => {
  it.each([
    ['openai', openAi],
    ['anthropic', anthropic],
    ['gemini', gemini],
  ])(
    'are recognised from %s, thrown by the provider package and as mapped to a RatchetError',
    (kind, error) => {
      expect(isContextLengthError(error)).toBe(true);
      const mapped = providerErrorOf(error, { name: 'main', kind }, 0);
      expect(mapped.code).toBe('model_request_invalid');
      expect(isContextLengthError(mapped)).toBe(true);
    },
  );

  it('are recognised from the code alone, from a bare error body, and from an error in a stream', () => {
    const codeOnly = apiError(
      400,
      { error: { message: 'too long', code: 'context_length_exceeded' } },
      'Bad Request',
    );
    expect(isContextLengthError(codeOnly)).toBe(true);
    expect(
      isContextLengthError('{"type":"error","error":{"message":"prompt is too long: 5 tokens > 4 maximum"}}'),
    ).toBe(true);
    expect(
      isContextLengthError({
        type: 'invalid_request_error',
        message: 'input length and `max_tokens` exceed context limit',
      }),
    ).toBe(true);
    // llama.cpp's server, an OpenAI-compatible one.
    expect(
      isContextLengthError(new Error('the request exceeds the available context size, try increasing it')),
    ).toBe(true);
  });

  it('are not other refusals: rate limits on tokens per minute, bad parameters, auth, overload', () => {
    const tokensPerMinute = apiError(
      429,
      {
        error: {
          message: 'Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 50000.',
          type: 'tokens',
          code: 'rate_limit_exceeded',
        },
      },
      'Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 50000.',
    );
    expect(isContextLengthError(tokensPerMinute)).toBe(false);
    expect(isContextLengthError(providerErrorOf(tokensPerMinute, { name: 'main', kind: 'openai' }, 0))).toBe(
      false,
    );
    const badParameter = apiError(
      400,
      { error: { message: "Invalid value for 'temperature'", code: 'invalid_value' } },
      "Invalid value for 'temperature'",
    );
    expect(isContextLengthError(badParameter)).toBe(false);
    expect(
      isContextLengthError(new RatchetError('model_auth_failed', 'anthropic provider "main": HTTP 401')),
    ).toBe(false);
    expect(isContextLengthError({ type: 'overloaded_error', message: 'Overloaded' })).toBe(false);
    expect(isContextLengthError(undefined)).toBe(false);
  });

  it('reads a bounded part of a hostile body and does not loop on a cyclic cause chain', () => {
    const cyclic = new Error('first') as Error & { cause?: unknown };
    cyclic.cause = cyclic;
    expect(isContextLengthError(cyclic)).toBe(false);
    const huge = `${'x'.repeat(5_000_000)} prompt is too long`;
    const started = performance.now();
    expect(isContextLengthError(huge)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
