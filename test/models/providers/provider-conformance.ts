import { describe, expect, it, vi } from 'vitest';
import { type FakeReply, startFakeProviderServer, useFakeProvider } from './fake-provider-server.js';
import { completerOf, failureOf, neverAborted, requestOf, userMessage } from './provider-fixtures.js';

export interface ProviderConformanceOptions {
  kind: string;
  model: string;
  /** The path prefix the kind's base_url carries (`/v1`, `/v1beta`). */
  basePath: string;
  /** The provider's error body for an HTTP status, carrying `message`. */
  errorBody(status: number, message: string): unknown;
  /** A successful non-streaming reply that says `text`. */
  textReply(text: string): FakeReply;
  /** Stream events that start a reply with the text deltas "Hel", "lo" and never finish it. */
  unfinishedStream: readonly unknown[];
  /** A whole streamed reply whose text comes as `deltas`, finished as the provider finishes one. */
  streamedReply(deltas: readonly string[]): FakeReply & { sse: readonly unknown[] };
}

/**
 * What every kind does with failures, whatever its wire format: each maps to the RatchetError the retry
 * policy relies on, keeps the provider's own message, names the provider, and is one request (no hidden
 * retries).
 */
export function describeProviderConformance(options: ProviderConformanceOptions): void {
  const { kind, model } = options;
  describe(`${kind}: failures and the request budget`, () => {
    const fake = useFakeProvider(kind, model, (origin) => ({
      api_key: 'sk-test',
      base_url: `${origin}${options.basePath}`,
    }));
    const { completer } = fake;
    const errorReply = (
      status: number,
      message: string,
      headers: Record<string, string> = {},
    ): FakeReply => ({
      json: options.errorBody(status, message),
      status,
      headers,
    });
    const request = () => requestOf([userMessage('Hi')]);

    it('answers with text in one request', async () => {
      fake.server.reply(options.textReply('Hello there.'));
      const completion = await completer().complete(request(), neverAborted());
      expect(completion.parts).toEqual([{ type: 'text', text: 'Hello there.' }]);
      expect(completion.usage.requests).toBe(1);
      expect(fake.server.requests).toHaveLength(1);
    });

    it('429: rate limited, retryable, with the retry-after the provider asked for', async () => {
      const error = await fake.sendFailure(
        errorReply(429, 'Slow down, please.', { 'retry-after': '7' }),
        request(),
      );
      expect(error.code).toBe('model_rate_limited');
      expect(error.retryable).toBe(true);
      expect(error.retryAfterMs).toBe(7000);
      expect(error.message).toContain('Slow down, please.');
      expect(error.message).toContain(`provider "test-${kind}"`);
      expect(error.details).toMatchObject({ status: 429, provider: `test-${kind}`, kind });
      expect(fake.server.requests).toHaveLength(1);
    });

    it('429 while streaming: the same error, and no delta', async () => {
      fake.server.reply(errorReply(429, 'Too many requests.', { 'retry-after-ms': '1500' }));
      const deltas: string[] = [];
      const error = await failureOf(
        completer().complete({ ...request(), onTextDelta: (delta) => deltas.push(delta) }, neverAborted()),
      );
      expect(error.code).toBe('model_rate_limited');
      expect(error.retryAfterMs).toBe(1500);
      expect(deltas).toEqual([]);
    });

    for (const [how, cutOff] of [
      ['ends', false],
      ['breaks off', true],
    ] as const) {
      it(`a stream that ${how} before the reply is finished fails as a network error, never a short reply`, async () => {
        fake.server.reply({ sse: options.unfinishedStream, cutOff });
        const deltas: string[] = [];
        const error = await failureOf(
          completer().complete({ ...request(), onTextDelta: (delta) => deltas.push(delta) }, neverAborted()),
        );
        expect(deltas).toEqual(['Hel', 'lo']);
        // Retried either way; the chat-completions package itself calls a stream without a finish reason
        // an invalid response.
        expect(['model_network_error', 'model_bad_response']).toContain(error.code);
        expect(error.retryable).toBe(true);
      });
    }

    it('a reply body over max_reply_chars: reply_too_large, not retryable, cut off before its end', async () => {
      // 2,000,000 characters against a limit of 1000: the body is cut off after 6 bytes a character + 1 MiB.
      fake.server.reply(options.textReply('x'.repeat(2_000_000)));
      const error = await failureOf(completer({ max_reply_chars: 1000 }).complete(request(), neverAborted()));
      expect(error.code).toBe('reply_too_large');
      expect(error.retryable).toBe(false);
      expect(error.message).toContain(`provider "test-${kind}"`);
      expect(error.message).toContain('max_reply_chars of 1000');
      expect(error.message).toContain(`took more than ${1000 * 6 + 1024 * 1024} bytes on the wire`);
      expect(fake.server.requests).toHaveLength(1);
    });

    it('a reply within the byte bound but over max_reply_chars: reply_too_large too', async () => {
      fake.server.reply(options.textReply('y'.repeat(1500)));
      const error = await failureOf(completer({ max_reply_chars: 1000 }).complete(request(), neverAborted()));
      expect(error.code).toBe('reply_too_large');
      expect(error.message).toContain('holds 1500 characters');
    });

    it('a stream over max_reply_chars is cancelled at the delta that goes over', async () => {
      fake.server.reply({ sse: options.unfinishedStream });
      const deltas: string[] = [];
      const error = await failureOf(
        completer({ max_reply_chars: 4 }).complete(
          { ...request(), onTextDelta: (delta) => deltas.push(delta) },
          neverAborted(),
        ),
      );
      expect(error.code).toBe('reply_too_large');
      // "Hel" is passed on; "lo" would make 5 characters and is not.
      expect(deltas).toEqual(['Hel']);
    });

    it('500: server error, retryable, not retried here', async () => {
      const error = await fake.sendFailure(errorReply(500, 'The server had an error.'), request());
      expect(error.code).toBe('model_server_error');
      expect(error.retryable).toBe(true);
      expect(error.message).toContain('The server had an error.');
      expect(fake.server.requests).toHaveLength(1);
    });

    it('401: auth failed at once, naming the provider', async () => {
      const error = await fake.sendFailure(errorReply(401, 'Invalid API key.'), request());
      expect(error.code).toBe('model_auth_failed');
      expect(error.retryable).toBe(false);
      expect(error.message).toContain(`${kind} provider "test-${kind}"`);
      expect(error.message).toContain('Invalid API key.');
    });

    it('403: auth failed too', async () => {
      const error = await fake.sendFailure(errorReply(403, 'Permission denied.'), request());
      expect(error.code).toBe('model_auth_failed');
    });

    it('400: the request is invalid, not retryable', async () => {
      const error = await fake.sendFailure(errorReply(400, 'Invalid value for max_tokens.'), request());
      expect(error.code).toBe('model_request_invalid');
      expect(error.retryable).toBe(false);
      expect(error.message).toContain('Invalid value for max_tokens.');
    });

    it('a malformed body: bad response, retryable', async () => {
      const error = await fake.sendFailure({ text: '{"id": "oops", "content": [', status: 200 }, request());
      expect(error.code).toBe('model_bad_response');
      expect(error.retryable).toBe(true);
    });

    it('a body of the wrong shape: bad response', async () => {
      const error = await fake.sendFailure(
        {
          json: { unexpected: true, candidates: 'no', choices: 3, content: 'x', output: 7 },
        },
        request(),
      );
      expect(error.code).toBe('model_bad_response');
    });

    it('no reply within timeout_ms: network error, and the request is aborted', async () => {
      fake.server.reply({ hang: true });
      const started = Date.now();
      const error = await failureOf(completer({ timeout_ms: 150 }).complete(request(), neverAborted()));
      expect(error.code).toBe('model_network_error');
      expect(error.retryable).toBe(true);
      expect(error.message).toContain('150 ms');
      // Cut at the timeout, not left to hang until the test's own (generous: the machine may be busy).
      expect(Date.now() - started).toBeLessThan(30_000);
    });

    it('a dropped connection: network error', async () => {
      const error = await fake.sendFailure({ drop: true }, request());
      expect(error.code).toBe('model_network_error');
      expect(error.retryable).toBe(true);
      expect(error.message).toContain('the connection broke');
      expect(error.details?.reason).toBeUndefined();
    });

    it('nobody listening: network error that names base_url, retried briefly', async () => {
      const closed = await startFakeProviderServer();
      const baseUrl = `${closed.origin}${options.basePath}`;
      await closed.close();
      const error = await failureOf(
        completerOf(kind, model, { api_key: 'sk-test', base_url: baseUrl }).complete(
          request(),
          neverAborted(),
        ),
      );
      expect(error.code).toBe('model_network_error');
      expect(error.retryable).toBe(true);
      expect(error.message).toMatch(
        new RegExp(
          `^${kind} provider "[\\w-]+": cannot reach its base_url ${baseUrl}: connection refused: nothing listens there \\(ECONNREFUSED\\); check that the server is running there and that base_url is right$`,
        ),
      );
      expect(error.details).toMatchObject({
        reason: 'unreachable',
        base_url: baseUrl,
        max_attempts: 3,
        backoff_base_ms: 500,
      });
    });

    describe('a request that stops sending (first_token_timeout_ms, idle_timeout_ms)', () => {
      const streaming = (deltas: string[]) => ({
        ...request(),
        onTextDelta: (delta: string) => deltas.push(delta),
      });
      /** The one request the server got was hung up on by the client (not left to the server to end). */
      const expectCutShort = () =>
        vi.waitFor(() => expect(fake.server.requests.map((sent) => sent.cutShort)).toEqual([true]), {
          timeout: 10_000,
        });

      it('a stream that sends a chunk and then stalls is aborted after idle_timeout_ms: model_stalled, retried', async () => {
        fake.server.reply({ sse: options.unfinishedStream, stall: true });
        const deltas: string[] = [];
        const error = await failureOf(
          completer({ idle_timeout_ms: 300 }).complete(streaming(deltas), neverAborted()),
        );
        expect(error.code).toBe('model_stalled');
        expect(error.retryable).toBe(true);
        expect(error.message).toContain(`provider "test-${kind}"`);
        expect(error.message).toContain('idle_timeout_ms (300 ms)');
        expect(error.details).toMatchObject({ phase: 'idle', timeout_ms: 300, provider: `test-${kind}` });
        expect(deltas).toEqual(['Hel', 'lo']);
        await expectCutShort();
      });

      it('a streamed request whose headers never come is aborted after first_token_timeout_ms', async () => {
        fake.server.reply({ hang: true });
        const error = await failureOf(
          completer({ first_token_timeout_ms: 300 }).complete(streaming([]), neverAborted()),
        );
        expect(error.code).toBe('model_stalled');
        expect(error.retryable).toBe(true);
        expect(error.details).toMatchObject({ phase: 'first_token', timeout_ms: 300 });
        expect(error.message).toContain('first_token_timeout_ms (300 ms)');
        await expectCutShort();
      });

      it('a stream that sends its headers and then nothing is aborted after first_token_timeout_ms', async () => {
        fake.server.reply({ headersOnly: true, contentType: 'text/event-stream' });
        const error = await failureOf(
          completer({ first_token_timeout_ms: 300 }).complete(streaming([]), neverAborted()),
        );
        expect(error.code).toBe('model_stalled');
        expect(error.details).toMatchObject({ phase: 'first_token' });
        await expectCutShort();
      });

      it('an unstreamed body that stops midway is aborted after idle_timeout_ms', async () => {
        const whole = options.textReply('Hello there, this body stops in the middle.');
        if (!('json' in whole)) throw new Error('textReply must be a JSON reply');
        const body = JSON.stringify(whole.json);
        fake.server.reply({ text: body.slice(0, Math.floor(body.length / 2)), stall: true });
        const error = await failureOf(
          completer({ idle_timeout_ms: 300 }).complete(request(), neverAborted()),
        );
        expect(error.code).toBe('model_stalled');
        expect(error.retryable).toBe(true);
        expect(error.details).toMatchObject({ phase: 'idle', timeout_ms: 300 });
        await expectCutShort();
      });

      it('an unstreamed reply is generated before its headers: first_token_timeout_ms does not cut it short', async () => {
        // The server answers well after first_token_timeout_ms; only timeout_ms bounds an unstreamed reply.
        fake.server.reply({ ...options.textReply('Worth the wait.'), delayMs: 800 } as FakeReply);
        const completion = await completer({ first_token_timeout_ms: 200, idle_timeout_ms: 200 }).complete(
          request(),
          neverAborted(),
        );
        expect(completion.parts).toEqual([{ type: 'text', text: 'Worth the wait.' }]);
      });

      it('a slow but steady stream (a chunk every 100 ms for 2 s) is read whole, not aborted', async () => {
        const pieces = Array.from({ length: 20 }, (_, index) => `p${index} `);
        const reply = options.streamedReply(pieces);
        // Every event comes 100 ms after the one before: the whole reply takes over 2 s, each gap a sixth of
        // idle_timeout_ms (a margin so that a busy machine's late timers do not make it look stalled).
        fake.server.reply({ ...reply, intervalMs: 100 });
        const deltas: string[] = [];
        const completion = await completer({ first_token_timeout_ms: 600, idle_timeout_ms: 600 }).complete(
          streaming(deltas),
          neverAborted(),
        );
        expect(deltas).toEqual(pieces);
        expect(completion.parts).toEqual([{ type: 'text', text: pieces.join('') }]);
      });
    });

    it("the caller's abort ends the request with the signal's reason, not a model error", async () => {
      fake.server.reply({ hang: true });
      const controller = new AbortController();
      const reason = new Error('run cancelled');
      setTimeout(() => controller.abort(reason), 50);
      await expect(completer().complete(request(), controller.signal)).rejects.toBe(reason);
    });
  });
}
