import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/index.js';
import { resolveLogFormat } from '../../src/log/log-format.js';
import { terminalLogStream } from '../../src/log/terminal-log.js';
import { createRedisOutageLog, isRedisConnectionError } from '../../src/redis/redis-outage.js';

/** A stream that keeps what is written, as lines; `isTTY` makes it count as a terminal. */
function capture(isTTY = false): Writable & { lines(): string[]; isTTY: boolean } {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return Object.assign(stream, {
    isTTY,
    lines: () => text.split('\n').filter((line) => line !== ''),
  });
}

function connectionRefused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6390'), { code: 'ECONNREFUSED' });
}

describe('resolveLogFormat', () => {
  it('is pretty at a terminal and JSON elsewhere unless told; RATCHET_LOG_FORMAT wins over the config', () => {
    expect(resolveLogFormat({ setting: undefined, env: {}, toTerminal: true })).toBe('pretty');
    expect(resolveLogFormat({ setting: 'auto', env: {}, toTerminal: false })).toBe('json');
    expect(resolveLogFormat({ setting: 'json', env: {}, toTerminal: true })).toBe('json');
    expect(
      resolveLogFormat({ setting: 'json', env: { RATCHET_LOG_FORMAT: 'pretty' }, toTerminal: false }),
    ).toBe('pretty');
    expect(() =>
      resolveLogFormat({ setting: 'auto', env: { RATCHET_LOG_FORMAT: 'fancy' }, toTerminal: true }),
    ).toThrow('RATCHET_LOG_FORMAT: must be auto, json, pretty (got "fancy"); unset it for auto');
  });

  it('lets createLogger write JSON to a pipe and short lines to a terminal', () => {
    const pipe = capture(false);
    createLogger({ destination: pipe, env: {} }).warn({ run_id: 'run_1' }, 'careful');
    expect(JSON.parse(pipe.lines()[0] ?? '')).toMatchObject({ level: 40, msg: 'careful', run_id: 'run_1' });

    const terminal = capture(true);
    createLogger({ destination: terminal, env: {} }).warn({ run_id: 'run_1' }, 'careful');
    expect(terminal.lines()).toHaveLength(1);
    expect(terminal.lines()[0]).toMatch(/^\S*\[\d\d:\d\d:\d\d\]\S* \S*WARN\S*: careful \(run_id=run_1\)$/);
  });
});

describe('the terminal log format', () => {
  it('prints an error as one line (its code and message, no stack), with the context after it', () => {
    const out = capture();
    const logger = createLogger({ destination: out, format: 'pretty', env: {} });
    const error = new Error('agent "editor" is not configured\non this worker');
    logger.error(
      { err: error, job_id: 'j1', step: 'iteration', detail: { deep: 'x'.repeat(500) } },
      'step failed',
    );
    const lines = out.lines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(
      'ERROR: step failed: agent "editor" is not configured on this worker (job_id=j1',
    );
    expect(lines[0]).not.toContain('    at ');
    expect(lines[0]?.length).toBeLessThan(460);
  });

  it('holds back repeats of a line while its window lasts, then says how many it held back', () => {
    let now = 0;
    const out = capture();
    const stream = terminalLogStream({
      destination: out,
      colorize: false,
      repeatWindowMs: 10_000,
      now: () => now,
    });
    const line = (msg: string) =>
      `${JSON.stringify({ level: 50, time: 0, msg, err: { message: 'boom' } })}\n`;
    for (let second = 0; second < 9; second += 1) {
      now = second * 1000;
      stream.write(line('retention sweep failed'));
    }
    stream.write(line('another problem'));
    expect(out.lines()).toHaveLength(2);
    now = 12_000;
    stream.write(line('retention sweep failed'));
    expect(out.lines()).toHaveLength(3);
    expect(out.lines()[2]).toContain('retention sweep failed [8 more like this in the last 12 s]: boom');
  });
});

describe('the Redis outage log', () => {
  it('tells an outage once, reminds while it lasts, and says when Redis is back', () => {
    let now = 0;
    const out = capture();
    const logger = createLogger({ destination: out, format: 'json', env: {} });
    const outage = createRedisOutageLog({ logger, reminderMs: 30_000, now: () => now });
    outage.ready();
    expect(out.lines()).toEqual([]);
    for (let tenth = 0; tenth < 400; tenth += 1) {
      now = tenth * 100;
      expect(outage.absorb(connectionRefused())).toBe(true);
    }
    now = 41_000;
    outage.ready();
    outage.ready();
    const records = out.lines().map((line) => JSON.parse(line) as { msg: string; down_ms?: number });
    expect(records.map((record) => record.msg)).toEqual([
      'Redis is unreachable (connect ECONNREFUSED 127.0.0.1:6390): retrying; steps wait until it is back',
      'Redis is still unreachable after 30.0 s (connect ECONNREFUSED 127.0.0.1:6390): retrying',
      'Redis is back (unreachable for 41.0 s)',
    ]);
    expect(records[2]?.down_ms).toBe(41_000);
  });

  it('leaves errors that are not about the connection to their caller', () => {
    const outage = createRedisOutageLog({ logger: createLogger({ destination: capture(), env: {} }) });
    expect(outage.absorb(new Error('ERR Error running script'))).toBe(false);
    expect(outage.absorb(new Error('Missing lock for job 1. moveToFinished'))).toBe(false);
  });

  it('knows the errors of a connection that is down, reset or not yet loaded', () => {
    expect(isRedisConnectionError(connectionRefused())).toBe(true);
    expect(isRedisConnectionError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(
      true,
    );
    expect(isRedisConnectionError(new Error('Connection is closed.'))).toBe(true);
    expect(isRedisConnectionError(new Error('LOADING Redis is loading the dataset in memory'))).toBe(true);
    expect(isRedisConnectionError(new Error('WRONGTYPE Operation against a key'))).toBe(false);
    expect(isRedisConnectionError('ECONNREFUSED')).toBe(false);
  });
});
