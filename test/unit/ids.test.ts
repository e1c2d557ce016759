import { describe, expect, it } from 'vitest';
import {
  isSessionId,
  messageId,
  newRunId,
  newSessionId,
  sessionIdOfRun,
  stepJobId,
} from '../../src/workflows/ids.js';

describe('session and run ids', () => {
  it('new session ids are valid and random', () => {
    const ids = Array.from({ length: 50 }, newSessionId);
    for (const id of ids) expect(isSessionId(id)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('a run id embeds its session, and sessionIdOfRun gives it back', () => {
    for (let index = 0; index < 20; index += 1) {
      const sessionId = newSessionId();
      const runId = newRunId(sessionId);
      expect(runId).toContain(sessionId.slice('ses_'.length));
      expect(sessionIdOfRun(runId)).toBe(sessionId);
    }
  });

  it('run ids of one session are distinct', () => {
    const sessionId = newSessionId();
    const runs = Array.from({ length: 50 }, () => newRunId(sessionId));
    expect(new Set(runs).size).toBe(runs.length);
  });

  it('newRunId refuses what is not a session id', () => {
    expect(() => newRunId('session-1')).toThrow('not a session id: session-1');
    expect(() => newRunId('ses_short')).toThrow();
    expect(() => newRunId(`${newSessionId()}x`)).toThrow();
  });

  it.each([
    '',
    'run_',
    'ses_0123456789abcdef',
    'run_0123456789abcdef',
    'run_0123456789abcdef_short',
    'run_0123456789ABCDEF_0123456789',
    'run_0123456789abcdef_0123456789-i1',
    'xrun_0123456789abcdef_0123456789',
  ])('sessionIdOfRun(%j) is undefined', (text) => {
    expect(sessionIdOfRun(text)).toBeUndefined();
  });

  it('isSessionId rejects garbage', () => {
    expect(isSessionId('ses_0123456789abcdef')).toBe(true);
    expect(isSessionId('ses_0123456789abcde')).toBe(false);
    expect(isSessionId('ses_0123456789abcdefg')).toBe(false);
    expect(isSessionId('SES_0123456789abcdef')).toBe(false);
    expect(isSessionId('ses_0123456789abcde:')).toBe(false);
  });
});

describe('step job ids and message ids', () => {
  const runId = newRunId(newSessionId());

  it('are deterministic', () => {
    expect(stepJobId.iteration(runId, 3)).toBe(stepJobId.iteration(runId, 3));
    expect(stepJobId.tool(runId, 3, 1)).toBe(stepJobId.tool(runId, 3, 1));
    expect(messageId.reply(runId, 3)).toBe(messageId.reply(runId, 3));
    expect(messageId.toolResult(runId, 3, 1)).toBe(messageId.toolResult(runId, 3, 1));
    expect(messageId.input(runId)).toBe(messageId.input(runId));
  });

  it('are distinct across steps, iterations, indexes and runs', () => {
    const otherRun = newRunId(newSessionId());
    const ids = [
      stepJobId.iteration(runId, 1),
      stepJobId.iteration(runId, 11),
      stepJobId.iteration(otherRun, 1),
      stepJobId.tool(runId, 1, 1),
      stepJobId.tool(runId, 11, 1),
      stepJobId.tool(runId, 1, 11),
      stepJobId.tool(otherRun, 1, 1),
    ];
    expect(new Set(ids).size).toBe(ids.length);
    const messages = [
      messageId.input(runId),
      messageId.reply(runId, 1),
      messageId.reply(runId, 2),
      messageId.toolResult(runId, 1, 0),
      messageId.toolResult(runId, 1, 1),
      messageId.toolResult(runId, 2, 0),
      messageId.reply(otherRun, 1),
    ];
    expect(new Set(messages).size).toBe(messages.length);
  });

  it('contain no ":" (BullMQ job ids may not) and start with the run id', () => {
    const ids = [
      stepJobId.iteration(runId, 12),
      stepJobId.tool(runId, 12, 3),
      messageId.input(runId),
      messageId.reply(runId, 12),
      messageId.toolResult(runId, 12, 3),
    ];
    for (const id of ids) {
      expect(id).not.toContain(':');
      expect(id.startsWith(runId)).toBe(true);
    }
  });
});
