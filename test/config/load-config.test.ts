import './register-fake-provider.js';
import '../../src/models/index.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { builtinToolboxNames } from '../../src/tools/builtin/index.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

const configText = `
providers:
  - name: default
    kind: fake
    model: \${MODEL}
agents:
  - name: assistant
    provider: default
`;

let root: string;
let configDir: string;
let workingDir: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ratchet-config-'));
  configDir = join(root, 'config');
  workingDir = join(root, 'cwd');
  mkdirSync(configDir);
  mkdirSync(workingDir);
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function writeConfig(text: string): string {
  const path = join(configDir, 'ratchet.yaml');
  writeFileSync(path, text);
  return path;
}

function loadError(action: () => unknown): ConfigError {
  try {
    action();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('loads the example coding-agent config with the built-in toolboxes', () => {
    const path = join(fixtures, '../../../config/coding-agent.yaml');
    const loaded = loadConfig(path, { env: {}, cwd: workingDir, knownToolboxes: builtinToolboxNames });
    expect(loaded.config.agents[0]?.toolboxes).toEqual(['filesystem', 'search', 'exec', 'git', 'http']);
    expect(loaded.config.tools.exec).toMatchObject({ enabled: true, shell: false });
  });

  it('loads a file and reports where it came from', () => {
    const loaded = loadConfig(join(fixtures, 'minimal.yaml'), { env: {}, cwd: workingDir });
    expect(loaded.path).toBe(join(fixtures, 'minimal.yaml'));
    expect(loaded.configDir).toBe(fixtures);
    expect(loaded.config.agents.map((agent) => agent.name)).toEqual(['assistant']);
  });

  it('loads a file that sets everything', () => {
    const { config } = loadConfig(join(fixtures, 'full.yaml'), {
      env: { FAKE_MODEL: 'big' },
      cwd: workingDir,
    });
    expect(config.providers).toEqual([
      { name: 'default', kind: 'fake', model: 'big', temperature: 0.2 },
      { name: 'cheap', kind: 'fake', model: 'fake-small' },
    ]);
    expect(config.agents[0]).toEqual({
      name: 'planner',
      description: 'Breaks work into steps',
      prefix: '🧭',
      instructions: '# Role\nYou plan. Costs are in $ (US dollars).\n',
      middleware: [],
      provider: 'default',
      toolboxes: ['search', 'files'],
      skills: [],
      tools: { send: { requires_approval: true } },
      options: {
        max_iterations: 25,
        stream: false,
        on_change: 'pin',
        on_busy: 'reject',
        max_queued_messages: 10,
        delegate: true,
        context_threshold: 0.8,
      },
    });
    expect(config.entry_agent).toBe('helper');
    expect(config.max_delegation_depth).toBe(3);
    expect(config.redis).toEqual({
      url: 'redis://:hunter2@redis.internal:6380/2',
      prefix: 'team-a',
      shards: 4,
    });
    expect(config.worker).toEqual({
      concurrency: 3,
      lock_duration_ms: 20_000,
      stalled_interval_ms: 2_000,
      max_stalled_count: 2,
      step_attempts: 7,
      backoff_base_ms: 500,
      backoff_max_ms: 30_000,
      shutdown_timeout_ms: 5_000,
      question_recheck_ms: 60_000,
      keep_completed_jobs_s: 3_600,
      dead_worker_ms: 3_000,
      dead_connection_ms: 500,
      capability_wait_s: 60,
    });
    expect(config.events).toEqual({ max_len: 500, retention_s: 3_600, max_kept_per_event: 1_000 });
    expect(config.api).toEqual({
      host: '0.0.0.0',
      port: 9090,
      tokens: ['a-very-long-token-0001'],
      idempotency_ttl_s: 86_400,
      allowed_hosts: [],
      allowed_origins: [],
      body_limit_bytes: 2048,
      max_metadata_bytes: 1024,
      keepalive_ms: 5000,
      redis_timeout_ms: 1500,
      max_followers: 50,
      admin_queues: true,
      mcp_toolboxes: {
        enabled: true,
        toolboxes: ['filesystem', 'search'],
        requires_approval: ['write_file'],
      },
    });
  });

  it('checks toolboxes when told which exist', () => {
    const error = loadError(() =>
      loadConfig(join(fixtures, 'full.yaml'), {
        env: { FAKE_MODEL: 'big' },
        cwd: workingDir,
        knownToolboxes: ['search'],
      }),
    );
    expect(error.problems).toEqual([
      'agents[0].toolboxes[1]: unknown toolbox "files" (known toolboxes: search)',
      // The toolboxes the API serves are checked against the same list.
      'api.mcp_toolboxes.toolboxes[0]: unknown toolbox "filesystem": name one that can be served (search) or register a toolbox of that name in code (createToolBox)',
    ]);
  });

  it('reads variables from a .env file next to the config file', () => {
    writeFileSync(join(configDir, '.env'), 'MODEL=from-config-dir\nREDIS_URL=redis://dotenv:6379\n');
    const { config } = loadConfig(writeConfig(configText), { env: {}, cwd: workingDir });
    expect(config.providers[0]?.model).toBe('from-config-dir');
    expect(config.redis.url).toBe('redis://dotenv:6379');
  });

  it('reads variables from a .env file in the working directory', () => {
    writeFileSync(join(workingDir, '.env'), 'MODEL=from-cwd\n');
    const { config } = loadConfig(writeConfig(configText), { env: {}, cwd: workingDir });
    expect(config.providers[0]?.model).toBe('from-cwd');
  });

  it('prefers the environment, then the .env next to the config, then the one in the working directory', () => {
    writeFileSync(join(configDir, '.env'), 'MODEL=from-config-dir\n');
    writeFileSync(join(workingDir, '.env'), 'MODEL=from-cwd\nREDIS_URL=redis://cwd:6379\n');
    const path = writeConfig(configText);
    expect(loadConfig(path, { env: {}, cwd: workingDir }).config.providers[0]?.model).toBe('from-config-dir');
    const fromEnv = loadConfig(path, {
      env: { MODEL: 'from-env', REDIS_URL: 'redis://env:6379' },
      cwd: workingDir,
    });
    expect(fromEnv.config.providers[0]?.model).toBe('from-env');
    expect(fromEnv.config.redis.url).toBe('redis://env:6379');
  });

  it('takes Redis Cluster seed nodes from REDIS_CLUSTER_NODES when the file names none, and checks them', () => {
    const path = writeConfig(configText);
    const { config } = loadConfig(path, {
      env: { MODEL: 'm', REDIS_CLUSTER_NODES: 'redis://10.0.0.1:7000, redis://10.0.0.2:7000' },
      cwd: workingDir,
    });
    expect(config.redis.cluster_nodes).toEqual(['redis://10.0.0.1:7000', 'redis://10.0.0.2:7000']);
    expect(
      loadConfig(path, { env: { MODEL: 'm' }, cwd: workingDir }).config.redis.cluster_nodes,
    ).toBeUndefined();
    const bad = loadError(() =>
      loadConfig(writeConfig(`${configText}redis:\n  cluster_nodes: [http://x:1]\n`), {
        env: { MODEL: 'm' },
        cwd: workingDir,
      }),
    );
    expect(bad.problems).toEqual(['redis.cluster_nodes[0]: must be a redis:// or rediss:// URL']);
  });

  it('takes the workspace from RATCHET_WORKSPACE when the file sets none (the container image sets it)', () => {
    const path = writeConfig(configText);
    const fromEnv = loadConfig(path, {
      env: { MODEL: 'm', RATCHET_WORKSPACE: '/workspace' },
      cwd: workingDir,
    });
    expect(fromEnv.config.tools.workspace).toBe('/workspace');
    expect(loadConfig(path, { env: { MODEL: 'm' }, cwd: workingDir }).config.tools.workspace).toBe(
      './workspace',
    );
    const own = writeConfig(`${configText}tools:\n  workspace: ./mine\n`);
    const kept = loadConfig(own, { env: { MODEL: 'm', RATCHET_WORKSPACE: '/workspace' }, cwd: workingDir });
    expect(kept.config.tools.workspace).toBe('./mine');
  });

  it('does not modify process.env', () => {
    writeFileSync(join(configDir, '.env'), 'RATCHET_TEST_ONLY_MODEL=x\n');
    loadConfig(writeConfig(configText.replace('MODEL', 'RATCHET_TEST_ONLY_MODEL')), { cwd: workingDir });
    expect(process.env.RATCHET_TEST_ONLY_MODEL).toBeUndefined();
  });

  it('reports an unset variable with the file and line', () => {
    const path = writeConfig(configText);
    const error = loadError(() => loadConfig(path, { env: {}, cwd: workingDir }));
    expect(error.message).toBe(
      `invalid config ${path}:\n  - line 5: environment variable MODEL is not set (set it, or write \${MODEL:-default})`,
    );
  });

  it('reports a file that cannot be read', () => {
    const path = join(configDir, 'missing.yaml');
    const error = loadError(() => loadConfig(path, { env: {}, cwd: workingDir }));
    expect(error.code).toBe('config_invalid');
    expect(error.problems).toEqual([expect.stringMatching(/^cannot read the file: ENOENT/)]);
  });

  it('reports YAML syntax errors with line and column', () => {
    const path = writeConfig('providers:\n  - name: "default\n');
    const error = loadError(() => loadConfig(path, { env: {}, cwd: workingDir }));
    expect(error.problems).toEqual([expect.stringMatching(/^line 3, column 1: Missing closing "quote/)]);
  });
});
