import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  findExecutable,
  howToStartRedis,
  localServerPlan,
  redisServerArgs,
} from '../../src/redis/local-redis.js';

describe('localServerPlan', () => {
  it('starts a server only for this machine, on the URL port (6379 by default), with its password', () => {
    expect(localServerPlan('redis://127.0.0.1:6390')).toEqual({ port: 6390, password: undefined });
    expect(localServerPlan('redis://localhost')).toEqual({ port: 6379, password: undefined });
    expect(localServerPlan('redis://:s%40cret@[::1]:7000/2')).toEqual({ port: 7000, password: 's@cret' });
    expect(localServerPlan('redis://default:pw@127.0.0.1')).toEqual({ port: 6379, password: 'pw' });
  });

  it('refuses other hosts, TLS, ACL users and URLs that do not parse', () => {
    expect(localServerPlan('redis://redis.internal:6379')).toEqual({
      refused: 'redis.internal is not this machine',
    });
    expect(localServerPlan('rediss://127.0.0.1')).toMatchObject({ refused: expect.stringMatching(/TLS/) });
    expect(localServerPlan('redis://app:pw@127.0.0.1')).toMatchObject({
      refused: expect.stringMatching(/ACL/),
    });
    expect(localServerPlan('not a url')).toMatchObject({ refused: expect.stringMatching(/parse/) });
  });
});

describe('redisServerArgs', () => {
  it('binds loopback, keeps data and log in the data dir, with AOF and no eviction', () => {
    const args = redisServerArgs({ port: 6390, password: undefined }, '.ratchet/redis');
    const dir = resolve('.ratchet/redis');
    expect(args.join(' ')).toBe(
      `--port 6390 --bind 127.0.0.1 -::1 --dir ${dir} --logfile ${join(dir, 'redis.log')} --appendonly yes ` +
        '--appendfsync everysec --save  --maxmemory-policy noeviction --daemonize no',
    );
    expect(redisServerArgs({ port: 1, password: 'pw' }, '/d').slice(-2)).toEqual(['--requirepass', 'pw']);
  });
});

describe('findExecutable', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ratchet-path-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds an executable file in PATH order, ignoring files that are not executable', () => {
    writeFileSync(join(dir, 'redis-server'), '');
    chmodSync(join(dir, 'redis-server'), 0o644);
    expect(findExecutable('redis-server', ['', dir].join(delimiter))).toBeUndefined();
    chmodSync(join(dir, 'redis-server'), 0o755);
    expect(findExecutable('redis-server', ['/nonexistent', dir].join(delimiter))).toBe(
      join(dir, 'redis-server'),
    );
    expect(findExecutable('redis-server', undefined)).toBeUndefined();
  });
});

describe('howToStartRedis', () => {
  it('says why, how to start one, and hides the password', () => {
    const text = howToStartRedis('redis://:hunter2@127.0.0.1:6379', 'redis-server is not on the PATH');
    expect(text).toMatch(
      /^Redis does not answer at redis:\/\/:\*\*\*@127\.0\.0\.1:6379\/?, and redis-server is not on the PATH\./,
    );
    expect(text).toMatch(/redis-server/);
    expect(text).toMatch(/REDIS_URL/);
    expect(text).not.toMatch(/hunter2/);
  });
});
