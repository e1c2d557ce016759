import { APICallError } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { providerErrorOf } from '../../../src/models/providers/provider-error.js';

// How a connection that could not be made reads (a closed port, a name that does not resolve ...), as the
// packages report it: an APICallError without a status, "Cannot connect to API", the socket error as cause.
function cannotConnect(url: string, code: string): APICallError {
  const cause = Object.assign(new Error(`connect ${code} 203.0.113.9:443`), { code });
  return new APICallError({
    message: `Cannot connect to API: ${cause.message}`,
    url,
    requestBodyValues: {},
    cause,
    isRetryable: true,
  });
}

describe('an endpoint that cannot be reached', () => {
  it('names the configured base_url without its credentials or query', () => {
    const error = providerErrorOf(
      cannotConnect('https://user:secret@gateway.test/v1/chat/completions?key=k', 'ECONNREFUSED'),
      { name: 'local', kind: 'openai_compatible', baseUrl: 'https://user:secret@gateway.test/v1?key=k' },
      0,
    );
    expect(error.message).toBe(
      'openai_compatible provider "local": cannot reach its base_url https://gateway.test/v1: connection ' +
        'refused: nothing listens there (ECONNREFUSED); check that the server is running there and that ' +
        'base_url is right',
    );
    expect(error.message).not.toContain('secret');
    expect(error.details).toEqual({
      provider: 'local',
      kind: 'openai_compatible',
      reason: 'unreachable',
      base_url: 'https://gateway.test/v1',
      max_attempts: 3,
      backoff_base_ms: 500,
    });
  });

  it('names the default endpoint when the entry sets no base_url', () => {
    const error = providerErrorOf(
      cannotConnect('https://api.openai.com/v1/responses', 'ENOTFOUND'),
      { name: 'main', kind: 'openai' },
      0,
    );
    expect(error.message).toBe(
      'openai provider "main": cannot reach its default endpoint https://api.openai.com: the host name does ' +
        'not resolve (ENOTFOUND); check the network, or set base_url to reach it another way',
    );
  });

  it('tells each way of not connecting, and leaves a connection that broke midway as it was', () => {
    const reasons = Object.fromEntries(
      ['EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT'].map((code) => [
        code,
        providerErrorOf(cannotConnect('http://127.0.0.1:9/v1/x', code), { name: 'p', kind: 'k' }, 0).details
          ?.reason,
      ]),
    );
    expect(reasons).toEqual({
      EAI_AGAIN: 'unreachable',
      EHOSTUNREACH: 'unreachable',
      ENETUNREACH: 'unreachable',
      EADDRNOTAVAIL: 'unreachable',
      UND_ERR_CONNECT_TIMEOUT: 'unreachable',
    });
    const reset = providerErrorOf(
      cannotConnect('http://127.0.0.1:9/v1/x', 'ECONNRESET'),
      { name: 'p', kind: 'k', baseUrl: 'http://127.0.0.1:9/v1' },
      0,
    );
    expect(reset.code).toBe('model_network_error');
    expect(reset.message).toContain('the connection broke');
    expect(reset.details?.max_attempts).toBeUndefined();
  });
});
