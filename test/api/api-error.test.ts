import { describe, expect, it } from 'vitest';
import { ApiError, toApiError } from '../../src/api/index.js';
import { formatSseEvent } from '../../src/api/sse-connection.js';
import { type ErrorCode, errorCodes, RatchetError } from '../../src/errors/index.js';
import type { RatchetEvent } from '../../src/events/event.js';
import { wireErrorCodes } from '../../src/wire/index.js';

describe('toApiError', () => {
  it('maps each engine error a client causes to its wire code, keeping message and details', () => {
    const cases: [ErrorCode, string, number, Record<string, unknown>][] = [
      ['run_not_found', 'not_found', 404, { resource: 'run' }],
      ['session_not_found', 'not_found', 404, { resource: 'session' }],
      ['agent_not_found', 'not_found', 404, { resource: 'agent' }],
      ['question_not_found', 'not_found', 404, { resource: 'question' }],
      ['session_busy', 'conflict', 409, { reason: 'session_busy', active_run_id: 'run_1' }],
      ['run_finished', 'conflict', 409, { reason: 'run_finished', status: 'completed' }],
      ['question_closed', 'conflict', 409, { reason: 'question_closed' }],
      ['run_not_retryable', 'conflict', 409, { reason: 'run_not_retryable', status: 'completed' }],
      ['run_not_forkable', 'conflict', 409, { reason: 'run_not_forkable', status: 'running' }],
      ['invalid_response', 'invalid_request', 400, { question_id: 'q1' }],
    ];
    for (const [internal, wire, status, details] of cases) {
      const mapped = toApiError(
        new RatchetError(internal, `message of ${internal}`, {
          details: Object.fromEntries(
            Object.entries(details).filter(([key]) => key !== 'resource' && key !== 'reason'),
          ),
        }),
      );
      expect([mapped.code, mapped.status, mapped.message, mapped.details]).toEqual([
        wire,
        status,
        `message of ${internal}`,
        details,
      ]);
    }
  });

  it('answers every other internal code as a generic 500, and Redis trouble as 503', () => {
    const clientFacing = new Set([
      'run_not_found',
      'session_not_found',
      'agent_not_found',
      'question_not_found',
      'approval_not_found',
      'session_busy',
      'run_finished',
      'question_closed',
      'invalid_response',
      'idempotency_key_reused',
      'schedule_not_found',
      'schedule_exists',
      'invalid_run_settings',
      'redis_unavailable',
      'shutting_down',
      'too_many_followers',
      'record_too_new',
      'run_not_retryable',
      'run_not_forkable',
      'signals_full',
      'queue_full',
      'queued_message_not_found',
      'steer_unsupported',
    ]);
    for (const code of Object.keys(errorCodes) as ErrorCode[]) {
      if (clientFacing.has(code)) continue;
      const mapped = toApiError(new RatchetError(code, 'secret internals'));
      expect([code, mapped.code, mapped.message]).toEqual([code, 'internal', 'internal server error']);
      expect(mapped.isServerFault).toBe(true);
    }
    expect(toApiError(new Error('boom: secret')).message).toBe('internal server error');
    expect(toApiError('a string').code).toBe('internal');
    const away = toApiError(
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }),
    );
    expect([away.code, away.status, away.isServerFault]).toEqual(['unavailable', 503, false]);
    expect(away.message).not.toContain('6379');
  });

  it('answers each way ioredis says Redis is away, frozen or cut off as 503, and a full follower hub too', () => {
    const redisTrouble = [
      // A bounded maxRetriesPerRequest while Redis refuses connections (was a 500).
      Object.assign(
        new Error(
          'Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.',
        ),
        { name: 'MaxRetriesPerRequestError' },
      ),
      // commandTimeout while Redis is frozen.
      new Error('Command timed out'),
      new Error('Connection is closed.'),
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
    ];
    for (const error of redisTrouble) {
      const mapped = toApiError(error);
      expect([error.message, mapped.code, mapped.status]).toEqual([error.message, 'unavailable', 503]);
      expect(mapped.message).toBe('the service is temporarily unavailable; retry later');
    }
    const full = toApiError(
      new RatchetError('too_many_followers', 'this process already serves 5 followers'),
    );
    expect([full.code, full.details]).toEqual(['unavailable', { reason: 'too_many_followers' }]);
    // A record a newer Ratchet wrote, read by an older API during a rolling deploy: asking again reaches a newer one.
    const newer = toApiError(new RatchetError('record_too_new', 'run r is version 2 of record kind "run"'));
    expect([newer.code, newer.status, newer.details, newer.isServerFault]).toEqual([
      'unavailable',
      503,
      { reason: 'record_too_new' },
      false,
    ]);
  });

  it("maps Fastify's request errors: validation issues with their paths, body limit, media type", () => {
    const validation = toApiError(
      Object.assign(new Error('body/parts/0/text bad'), {
        statusCode: 400,
        validationContext: 'body',
        validation: [
          { keyword: 'invalid_type', instancePath: '/parts/0/text', message: 'expected string' },
          { keyword: 'unrecognized_keys', instancePath: '/', message: 'x', params: { keys: ['a', 'b'] } },
        ],
      }),
    );
    expect(validation.code).toBe('invalid_request');
    expect(validation.details).toEqual({
      issues: [
        { location: 'body', path: 'parts[0].text', message: 'expected string' },
        { location: 'body', path: 'a', message: 'unknown field' },
        { location: 'body', path: 'b', message: 'unknown field' },
      ],
    });
    const tooLarge = toApiError(
      Object.assign(new Error('too large'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }),
      { bodyLimitBytes: 2048 },
    );
    expect([tooLarge.code, tooLarge.status, tooLarge.details]).toEqual([
      'payload_too_large',
      413,
      {
        issues: [{ location: 'body', path: '', message: 'larger than 2048 bytes (api.body_limit_bytes)' }],
        limit_bytes: 2048,
      },
    ]);
    const mediaType = toApiError(
      Object.assign(new Error('Unsupported Media Type'), {
        code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',
        statusCode: 415,
      }),
    );
    expect(mediaType.code).toBe('unsupported_media_type');
    // A status on some library's error is not the client's fault.
    const foreign = toApiError(Object.assign(new Error('upstream said 404: key k'), { statusCode: 404 }));
    expect([foreign.code, foreign.message]).toEqual(['internal', 'internal server error']);
    expect(toApiError(null).code).toBe('internal');
    const serverSide = toApiError(Object.assign(new Error('socket hang up in plugin'), { statusCode: 500 }));
    expect(serverSide.message).toBe('internal server error');
  });

  it('keeps an ApiError as it is; every wire code has its status', () => {
    const error = new ApiError('unauthorized', 'no token');
    expect(toApiError(error)).toBe(error);
    expect(error.status).toBe(401);
    expect(Object.values(wireErrorCodes).every((status) => status >= 400 && status < 600)).toBe(true);
  });
});

describe('formatSseEvent', () => {
  it('frames an event with its log id, its kind, and the event as one line of JSON without its version', () => {
    const event: RatchetEvent = {
      v: 1,
      id: '1700000000000-3',
      kind: 'progress',
      run_id: 'run_x',
      agent: 'agent',
      time: '2026-01-01T00:00:00.000Z',
      data: { fraction: 0.5, message: 'half\nway' },
    };
    expect(formatSseEvent(event)).toBe(
      'id: 1700000000000-3\nevent: progress\n' +
        'data: {"id":"1700000000000-3","kind":"progress","run_id":"run_x","agent":"agent",' +
        '"time":"2026-01-01T00:00:00.000Z","data":{"fraction":0.5,"message":"half\\nway"}}\n\n',
    );
  });
});
