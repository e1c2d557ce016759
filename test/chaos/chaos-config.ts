import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The chaos mix (test/chaos/chaos.ts): one agent per kind of work, each on a scripted model, so every run of a
 * kind ends the same way and a faulted run can be compared with a run without faults.
 */
export const scenarioAgents = ['looper', 'lead', 'spawner', 'asker', 'reader'] as const;
export type Scenario = (typeof scenarioAgents)[number];

const call = (name: string, args: Record<string, unknown>, delayMs: number) => ({
  tool_calls: [{ name, arguments: args }],
  delay_ms: delayMs,
});

export interface ChaosConfigOptions {
  dir: string;
  redisUrl: string;
  prefix: string;
  apiPort: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** Delay of every scripted reply: how long each model call is in flight (a kill lands in one). */
  modelDelayMs: number;
}

/** Writes the config file of a chaos run (and the reader's workspace file) into `dir`; returns its path. */
export function writeChaosConfig(options: ChaosConfigOptions): string {
  const { dir, modelDelayMs: delay } = options;
  writeFileSync(join(dir, 'notes.txt'), `${'The chaos notes. '.repeat(300)}\n`);
  const provider = (name: string, script: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    name,
    kind: 'scripted',
    model: name,
    record_calls: 'calls.jsonl',
    ...script,
    ...extra,
  });
  const config = {
    providers: [
      provider('looper-model', {
        replies: [
          ...Array.from({ length: 4 }, (_, index) =>
            call('calculate', { expression: `${index} * 7` }, delay),
          ),
          { text: 'looped', delay_ms: delay },
        ],
      }),
      provider('lead-model', {
        replies: [call('delegate_to_agent', { agent: 'helper', task: 'check the numbers' }, delay)],
        rules: [{ when: { role: 'tool' }, reply: { text: 'the helper checked them', delay_ms: delay } }],
      }),
      provider('spawner-model', {
        replies: [
          call(
            'spawn_agents',
            {
              tasks: [
                { agent: 'helper', task: 'part one' },
                { agent: 'helper', task: 'part two' },
                { agent: 'helper', task: 'part three' },
              ],
            },
            delay,
          ),
        ],
        rules: [{ when: { role: 'tool' }, reply: { text: 'all three parts done', delay_ms: delay } }],
      }),
      provider('asker-model', {
        replies: [call('ask_user', { question: 'Which colour?', options: ['red', 'blue'] }, delay)],
        rules: [{ when: { role: 'tool' }, reply: { text: 'painted it', delay_ms: delay } }],
      }),
      provider(
        'reader-model',
        {
          replies: [
            ...Array.from({ length: 8 }, () => call('read_file', { path: 'notes.txt' }, delay)),
            { text: 'read it all', delay_ms: delay },
          ],
          summary: { text: 'Read the notes several times so far.', delay_ms: delay },
        },
        { context_window: 4000 },
      ),
      provider('helper-model', { default: { text: 'done by the helper', delay_ms: delay } }),
    ],
    agents: [
      { name: 'looper', provider: 'looper-model', toolboxes: ['utils'], options: { delegate: false } },
      { name: 'lead', provider: 'lead-model' },
      { name: 'spawner', provider: 'spawner-model' },
      { name: 'asker', provider: 'asker-model', options: { delegate: false } },
      {
        name: 'reader',
        provider: 'reader-model',
        toolboxes: ['filesystem'],
        options: { delegate: false, max_iterations: 20 },
        effects: [{ kind: 'compact', params: { threshold: 0.6 } }],
      },
      { name: 'helper', provider: 'helper-model', options: { delegate: false } },
    ],
    redis: { url: options.redisUrl, prefix: options.prefix },
    worker: {
      concurrency: 10,
      lock_duration_ms: options.lockDurationMs,
      stalled_interval_ms: options.stalledIntervalMs,
      backoff_base_ms: 100,
      backoff_max_ms: 1000,
      step_attempts: 8,
      shutdown_timeout_ms: 2000,
    },
    api: { host: '127.0.0.1', port: options.apiPort },
    tools: { workspace: dir, filesystem: { read_only: true } },
  };
  const path = join(dir, 'ratchet.json');
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}
