import './register-fake-provider.js';
import '../../src/models/index.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { configParser } from './config-parser.js';

// Every duration of the config has a stated upper bound, checked at load: a value past it is a config error
// at its path naming the limit, never a timer that overflows (it fires at once) or a date past year 9999.
const { parse, problemsOf } = configParser();
const provider = 'providers: [{ name: main, kind: fake, model: m, rate_limit: RATE }]';
const agent = 'agents: [{ name: writer, provider: main, options: OPTIONS }]';

/** A config with `extra` lines, the provider's rate_limit and the agent's options filled in. */
function configWith(extra: string, parts: { rate?: string; options?: string } = {}): string {
  return [
    provider.replace('RATE', parts.rate ?? '{}'),
    agent.replace('OPTIONS', parts.options ?? '{}'),
    extra,
  ].join('\n');
}

const overLimit: [string, string, { rate?: string; options?: string }, string, string][] = [
  ['agent timeout_s', '', { options: '{ timeout_s: 31536001 }' }, 'agents[0].options.timeout_s', '31536000'],
  [
    'agent timeout_s of 30 000 years',
    '',
    { options: '{ timeout_s: 1e12 }' },
    'agents[0].options.timeout_s',
    '31536000',
  ],
  ['lock_duration_ms', 'worker: { lock_duration_ms: 2147483648 }', {}, 'worker.lock_duration_ms', '3600000'],
  [
    'stalled_interval_ms',
    'worker: { stalled_interval_ms: 1e10 }',
    {},
    'worker.stalled_interval_ms',
    '3600000',
  ],
  [
    'shutdown_timeout_ms',
    'worker: { shutdown_timeout_ms: 3000000000 }',
    {},
    'worker.shutdown_timeout_ms',
    '3600000',
  ],
  ['backoff_max_ms', 'worker: { backoff_max_ms: 86400001 }', {}, 'worker.backoff_max_ms', '86400000'],
  [
    'question_recheck_ms',
    'worker: { question_recheck_ms: 1e12 }',
    {},
    'worker.question_recheck_ms',
    '86400000',
  ],
  [
    'keep_completed_jobs_s',
    'worker: { keep_completed_jobs_s: 1e12 }',
    {},
    'worker.keep_completed_jobs_s',
    '315360000',
  ],
  ['finished_runs_s', 'retention: { finished_runs_s: 1e15 }', {}, 'retention.finished_runs_s', '315360000'],
  [
    'idle_sessions_s',
    'retention: { idle_sessions_s: 315360001 }',
    {},
    'retention.idle_sessions_s',
    '315360000',
  ],
  ['sweep_interval_s', 'retention: { sweep_interval_s: 2592000 }', {}, 'retention.sweep_interval_s', '86400'],
  ['keepalive_ms', 'api: { keepalive_ms: 2592000000 }', {}, 'api.keepalive_ms', '3600000'],
  ['exec timeout_ms', 'tools: { exec: { timeout_ms: 2592000000 } }', {}, 'tools.exec.timeout_ms', '86400000'],
  ['http timeout_ms', 'tools: { http: { timeout_ms: 2592000000 } }', {}, 'tools.http.timeout_ms', '86400000'],
  ['git timeout_ms', 'tools: { git: { timeout_ms: 2592000000 } }', {}, 'tools.git.timeout_ms', '86400000'],
  [
    'MCP timeout_ms',
    'mcp_servers: [{ name: docs, command: node, timeout_ms: 2592000000 }]',
    {},
    'mcp_servers[0].timeout_ms',
    '86400000',
  ],
  [
    'MCP connect_timeout_ms',
    'mcp_servers: [{ name: docs, command: node, connect_timeout_ms: 2592000000 }]',
    {},
    'mcp_servers[0].connect_timeout_ms',
    '3600000',
  ],
  [
    'rate limit window_ms',
    '',
    { rate: '{ window_ms: 2592000000 }' },
    'providers[0].rate_limit.window_ms',
    '86400000',
  ],
  [
    'rate limit base_delay_ms',
    '',
    { rate: '{ base_delay_ms: 1e12 }' },
    'providers[0].rate_limit.base_delay_ms',
    '86400000',
  ],
];

describe('duration limits in the config', () => {
  it.each(overLimit)(
    'refuses %s past its limit, at its path, naming the limit',
    (_, extra, parts, path, limit) => {
      const problems = problemsOf(configWith(extra, parts));
      expect(problems).toContainEqual(
        expect.stringMatching(new RegExp(`^${path.replace(/[[\].]/g, '\\$&')}: .*${limit}`)),
      );
    },
  );

  it("refuses a provider's request timeout_ms past a day (its timer would fire at once)", () => {
    const text = [
      'providers: [{ name: main, kind: openai_compatible, base_url: "http://127.0.0.1:1/v1", model: m, timeout_ms: 2592000000 }]',
      'agents: [{ name: writer, provider: main }]',
    ].join('\n');
    expect(problemsOf(text)).toEqual([
      expect.stringMatching(/^providers\[0\]\.timeout_ms: must be at most 86400000 \(1 day\)/),
    ]);
    expect(parse(text.replace('2592000000', '86400000')).providers[0]).toMatchObject({
      timeout_ms: 86_400_000,
    });
  });

  it('takes every duration at its limit', () => {
    const config = parse(
      configWith(
        [
          'worker: { lock_duration_ms: 3600000, stalled_interval_ms: 3600000, shutdown_timeout_ms: 3600000, backoff_max_ms: 86400000, question_recheck_ms: 86400000, keep_completed_jobs_s: 315360000 }',
          'retention: { finished_runs_s: 315360000, idle_sessions_s: 315360000, sweep_interval_s: 86400 }',
          'api: { keepalive_ms: 3600000 }',
        ].join('\n'),
        { options: '{ timeout_s: 31536000 }', rate: '{ window_ms: 86400000 }' },
      ),
    );
    expect(config.agents[0]?.options.timeout_s).toBe(31_536_000);
    expect(config.retention.idle_sessions_s).toBe(315_360_000);
  });

  it('fails at load, from a file, with the path of the over-limit duration', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ratchet-durations-'));
    try {
      const file = join(dir, 'ratchet.yaml');
      writeFileSync(file, configWith('', { options: '{ timeout_s: 2592000000 }' }));
      let thrown: unknown;
      try {
        loadConfig(file, { env: {} });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      expect((thrown as ConfigError).problems).toEqual([
        'agents[0].options.timeout_s: must be at most 31536000 (365 days)',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
