// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config text with ${VAR} references.
import './register-fake-provider.js';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  DEFAULT_REDIS_URL,
  parseConfigText,
  resolveEntryAgent,
} from '../../src/config/index.js';
import { RatchetError } from '../../src/errors/index.js';
import { configParser } from './config-parser.js';

const { parse, problemsOf } = configParser();

const minimal = `
providers:
  - name: default
    kind: fake
    model: fake-model
agents:
  - name: assistant
    provider: default
`;

describe('parseConfigText: defaults', () => {
  it('fills every default', () => {
    expect(parse(minimal)).toEqual({
      providers: [{ name: 'default', kind: 'fake', model: 'fake-model' }],
      agents: [
        {
          name: 'assistant',
          description: '',
          prefix: '🤖',
          instructions: '',
          middleware: [],
          provider: 'default',
          toolboxes: [],
          skills: [],
          tools: {},
          options: {
            max_iterations: 10,
            stream: false,
            on_change: 'pin',
            on_busy: 'reject',
            max_queued_messages: 10,
            context_threshold: 0.8,
          },
        },
      ],
      redis: { url: DEFAULT_REDIS_URL, prefix: 'ratchet', shards: 1 },
      skills: { dir: '.ratchet/skills' },
      worker: {
        concurrency: 10,
        lock_duration_ms: 10_000,
        stalled_interval_ms: 2_000,
        max_stalled_count: 100,
        step_attempts: 5,
        backoff_base_ms: 1_000,
        backoff_max_ms: 60_000,
        shutdown_timeout_ms: 30_000,
        question_recheck_ms: 60_000,
        keep_completed_jobs_s: 86_400,
        dead_worker_ms: 2_000,
        dead_connection_ms: 300,
        capability_wait_s: 60,
      },
      retention: {
        finished_runs_s: 604_800,
        idle_sessions_s: 2_592_000,
        sweep_interval_s: 300,
        batch_size: 100,
      },
      handoffs: [],
      teams: [],
      max_delegation_depth: 5,
      pricing: {},
      default_context_windows: {},
      contracts: [],
      api: {
        host: '127.0.0.1',
        port: 8080,
        tokens: [],
        idempotency_ttl_s: 86_400,
        allowed_hosts: [],
        allowed_origins: [],
        body_limit_bytes: 1_048_576,
        max_metadata_bytes: 16_384,
        keepalive_ms: 15_000,
        redis_timeout_ms: 3_000,
        max_followers: 1_000,
        admin_queues: false,
        mcp_toolboxes: { enabled: false, toolboxes: [], requires_approval: [] },
      },
      tenants: {},
      admission: { recheck_s: 30, sweep_s: 5 },
      events: { max_len: 10_000, retention_s: 3_600, max_kept_per_event: 1_000 },
      triggers: [],
      log: { format: 'auto' },
      tools: {
        workspace: './workspace',
        filesystem: { read_only: false, max_read_bytes: 1_048_576, max_list_entries: 1_000 },
        search: { max_results: 200, max_files: 20_000, regex_timeout_ms: 2_000 },
        exec: {
          enabled: false,
          commands: [],
          timeout_ms: 30_000,
          max_output_bytes: 65_536,
          shell: false,
          sandbox: 'bwrap',
          network: false,
          read_only_paths: [],
        },
        git: { timeout_ms: 30_000, max_output_bytes: 262_144 },
        http: {
          allow_hosts: [],
          private_hosts: [],
          allow_private: false,
          timeout_ms: 15_000,
          max_response_bytes: 1_048_576,
          max_redirects: 5,
          forward_headers_on_redirect: [
            'accept',
            'accept-language',
            'content-language',
            'content-type',
            'user-agent',
          ],
        },
        memory: { max_notes: 50, max_note_chars: 4000, max_bytes: 32_768, retention_days: 90 },
        project_context: { enabled: true, files: ['AGENTS.md', '.ratchet/context.md'], max_bytes: 32_768 },
        browser: {
          headless: true,
          allow_hosts: [],
          private_hosts: [],
          allow_private: false,
          max_pages: 4,
          action_timeout_ms: 15_000,
          max_text_chars: 50_000,
          max_screenshot_bytes: 1_048_576,
          viewport_width: 1280,
          viewport_height: 800,
          max_resource_bytes: 10_485_760,
          downloads: false,
          idle_close_ms: 300_000,
          max_requests_in_flight: 8,
          max_bytes_in_flight: 33_554_432,
          network_namespace: 'auto',
        },
      },
      mcp_servers: [],
      telemetry: {
        traces: {
          enabled: false,
          service_name: 'ratchet',
          export_delay_ms: 1_000,
          capture_message_content: false,
          queue_spans: false,
        },
        metrics: { enabled: false, worker_host: '127.0.0.1', worker_port: 9464 },
      },
      webhooks: [],
      schedules: [],
    });
    expect(DEFAULT_REDIS_URL).toBe('redis://127.0.0.1:6379');
  });

  it('fills defaults inside partly written sections', () => {
    const config = parse(`${minimal}worker:\n  concurrency: 2\nredis:\n  shards: 3\n`);
    expect(config.worker.concurrency).toBe(2);
    expect(config.worker.step_attempts).toBe(5);
    expect(config.redis).toEqual({ url: DEFAULT_REDIS_URL, prefix: 'ratchet', shards: 3 });
  });

  it('treats sections left empty (every line below commented out) as defaults', () => {
    const config = parse(`${minimal}worker:\n  # concurrency: 2\nredis:\nevents:\nentry_agent:\n`);
    expect(config.worker.concurrency).toBe(10);
    expect(config.redis.prefix).toBe('ratchet');
    expect(config.events.max_len).toBe(10_000);
    expect(config.entry_agent).toBeUndefined();
  });

  it('takes redis.url from REDIS_URL when the file has none', () => {
    expect(parse(minimal, { env: { REDIS_URL: 'redis://cache:6390' } }).redis.url).toBe('redis://cache:6390');
    expect(
      parse(`${minimal}redis:\n  prefix: p\n`, { env: { REDIS_URL: 'redis://cache:6390' } }).redis,
    ).toEqual({
      url: 'redis://cache:6390',
      prefix: 'p',
      shards: 1,
    });
  });

  it('prefers the url written in the file over REDIS_URL', () => {
    const text = `${minimal}redis:\n  url: rediss://file:6379\n`;
    expect(parse(text, { env: { REDIS_URL: 'redis://cache:6390' } }).redis.url).toBe('rediss://file:6379');
  });

  it('merges the parsed kind fields into the provider entry', () => {
    const config = parse(minimal.replace('model: fake-model', 'model: fake-model\n    temperature: 0.5'));
    expect(config.providers[0]).toEqual({
      name: 'default',
      kind: 'fake',
      model: 'fake-model',
      temperature: 0.5,
    });
  });

  it('returns the configDir and source name it was given', () => {
    const loaded = parseConfigText(minimal, { env: {}, configDir: '/configs', sourceName: 'inline.yaml' });
    expect(loaded.configDir).toBe('/configs');
    expect(loaded.path).toBe('inline.yaml');
  });

  it('expands environment variables before parsing', () => {
    const text = minimal
      .replace('fake-model', '${MODEL}')
      .replace('provider: default', 'provider: ${P:-default}');
    const config = parse(text, { env: { MODEL: 'from-env' } });
    expect(config.providers[0]?.model).toBe('from-env');
    expect(config.agents[0]?.provider).toBe('default');
  });
});

describe('parseConfigText: problems', () => {
  it('rejects unknown keys at the root, naming the nearest allowed key', () => {
    expect(problemsOf(`${minimal}agent: {}\n`)).toEqual(['agent: unknown key (did you mean "agents"?)']);
  });

  it('rejects unknown keys in nested sections, listing the allowed keys when none is close', () => {
    expect(problemsOf(`${minimal}worker:\n  concurency: 2\n  color: blue\n`)).toEqual([
      'worker.concurency: unknown key (did you mean "concurrency"?)',
      'worker.color: unknown key (expected one of: concurrency, lock_duration_ms, stalled_interval_ms, ' +
        'max_stalled_count, step_attempts, backoff_base_ms, backoff_max_ms, shutdown_timeout_ms, ' +
        'question_recheck_ms, keep_completed_jobs_s, dead_worker_ms, dead_connection_ms, capability_wait_s, shards)',
    ]);
    expect(
      problemsOf(minimal.replace('provider: default', 'provider: default\n    options: {max_iteration: 3}')),
    ).toEqual(['agents[0].options.max_iteration: unknown key (did you mean "max_iterations"?)']);
  });

  it('rejects missing required fields', () => {
    expect(problemsOf('agents: []\n')).toEqual(['providers: required', 'agents: define at least one agent']);
    expect(problemsOf(minimal.replace('    model: fake-model\n', ''))).toEqual([
      'providers[0].model: required',
    ]);
    expect(problemsOf(minimal.replace('kind: fake', 'kind: ""'))).toEqual([
      'providers[0].kind: must not be empty',
    ]);
  });

  it('rejects values of the wrong type', () => {
    expect(problemsOf(`${minimal}redis:\n  shards: many\n`)).toEqual([
      'redis.shards: expected an integer, got "many"',
    ]);
    expect(problemsOf(`${minimal}worker: 5\n`)).toEqual([
      'worker: expected a mapping (key: value pairs), got 5',
    ]);
    expect(problemsOf(minimal.replace('name: assistant', 'name:'))).toEqual([
      'agents[0].name: expected a string, got an empty value',
    ]);
    expect(problemsOf(`${minimal}worker:\n  concurrency: 2.5\n`)).toEqual([
      'worker.concurrency: expected an integer, got 2.5',
    ]);
  });

  it('says how to fix values out of bounds', () => {
    const text = `${minimal}worker:\n  concurrency: 0\n  lock_duration_ms: 999\nredis:\n  shards: 1025\nevents:\n  max_len: 99\n`;
    expect(problemsOf(text)).toEqual([
      'worker.concurrency: must be at least 1',
      'worker.lock_duration_ms: must be at least 1000',
      'redis.shards: must be at most 1024',
      'events.max_len: must be at least 100',
    ]);
    const api = `${minimal}api:\n  redis_timeout_ms: 50\n  max_followers: 0\n`;
    expect(problemsOf(api)).toEqual([
      'api.redis_timeout_ms: must be at least 100',
      'api.max_followers: must be at least 1',
    ]);
  });

  it('takes api.allowed_hosts as host names or addresses, without scheme or port', () => {
    const good = `${minimal}api:\n  allowed_hosts: [ratchet.internal, 10.0.0.5, "[fd00::5]", "fd00::6", my_host]\n`;
    expect(parse(good).api.allowed_hosts).toEqual([
      'ratchet.internal',
      '10.0.0.5',
      '[fd00::5]',
      'fd00::6',
      'my_host',
    ]);
    const bad = `${minimal}api:\n  allowed_hosts: ["http://ratchet.internal", "ratchet.internal:8080", "*", "cafe:80"]\n`;
    const expected =
      'must be a host name or address without scheme or port, such as ratchet.internal or 10.0.0.5';
    expect(problemsOf(bad)).toEqual([
      `api.allowed_hosts[0]: ${expected}`,
      `api.allowed_hosts[1]: ${expected}`,
      `api.allowed_hosts[2]: ${expected}`,
      `api.allowed_hosts[3]: ${expected}`,
    ]);
  });

  it('takes api.allowed_origins as http(s) origins, as browsers send them', () => {
    const good = `${minimal}api:\n  allowed_origins: ["https://UI.example", "http://localhost:6274/", "http://[::1]:3000"]\n`;
    expect(parse(good).api.allowed_origins).toEqual([
      'https://UI.example',
      'http://localhost:6274/',
      'http://[::1]:3000',
    ]);
    const bad = `${minimal}api:\n  allowed_origins: ["ui.example", "https://ui.example/app", "*", "null", "https://*.example"]\n`;
    const expected =
      'must be an origin: http:// or https://, a host and an optional port, nothing after (https://ui.example:8443)';
    expect(problemsOf(bad)).toEqual(
      [0, 1, 2, 3, 4].map((index) => `api.allowed_origins[${index}]: ${expected}`),
    );
  });

  it('takes telemetry.metrics.worker_token of at least 16 characters, one word', () => {
    const token = (value: string) =>
      `${minimal}telemetry:\n  metrics:\n    enabled: true\n    worker_token: "${value}"\n`;
    expect(parse(token('metrics-token-0123456789')).telemetry.metrics.worker_token).toBe(
      'metrics-token-0123456789',
    );
    expect(parse(minimal).telemetry.metrics.worker_token).toBeUndefined();
    expect(problemsOf(token('short'))).toEqual([
      'telemetry.metrics.worker_token: must be at least 16 characters',
    ]);
    expect(problemsOf(token('a token with spaces in it'))).toEqual([
      'telemetry.metrics.worker_token: must not contain spaces (a bearer token is one word)',
    ]);
  });

  it('checks names, the redis prefix and the redis url', () => {
    const text = `${minimal.replace('name: assistant', 'name: 2nd assistant')}redis:\n  prefix: "{a}:b"\n  url: localhost\n`;
    expect(problemsOf(text)).toEqual([
      'agents[0].name: must start with a letter and contain only letters, digits, "_" and "-"',
      'redis.prefix: must contain only letters, digits, "_", "." and "-"',
      'redis.url: must be a redis:// or rediss:// URL',
    ]);
  });

  it('rejects an unknown provider with a suggestion, or the list of providers', () => {
    expect(problemsOf(minimal.replace('provider: default', 'provider: defualt'))).toEqual([
      'agents[0].provider: unknown provider "defualt" (did you mean "default"?)',
    ]);
    expect(problemsOf(minimal.replace('provider: default', 'provider: gpt'))).toEqual([
      'agents[0].provider: unknown provider "gpt" (known providers: default)',
    ]);
  });

  it('rejects an unknown provider kind, listing the known kinds', () => {
    expect(problemsOf(minimal.replace('kind: fake', 'kind: fak'))).toEqual([
      'providers[0].kind: unknown provider kind "fak" (did you mean "fake"?); known kinds: fake',
    ]);
    expect(problemsOf(minimal.replace('kind: fake', 'kind: openai'))).toEqual([
      'providers[0].kind: unknown provider kind "openai"; known kinds: fake',
    ]);
  });

  it("reports the kind's own field problems at their path in the entry", () => {
    expect(
      problemsOf(minimal.replace('model: fake-model', 'model: fake-model\n    temperature: hot')),
    ).toEqual(['providers[0].temperature: expected a number, got "hot"']);
    expect(problemsOf(minimal.replace('model: fake-model', 'model: fake-model\n    temprature: 1'))).toEqual([
      'providers[0].temprature: unknown key (did you mean "temperature"?)',
    ]);
  });

  it('checks toolboxes against the known ones when they are given', () => {
    const text = minimal.replace(
      'provider: default',
      'provider: default\n    toolboxes: [search, fles, shell]',
    );
    expect(problemsOf(text, { knownToolboxes: ['search', 'files'] })).toEqual([
      'agents[0].toolboxes[1]: unknown toolbox "fles" (did you mean "files"?)',
      'agents[0].toolboxes[2]: unknown toolbox "shell" (known toolboxes: search, files)',
    ]);
    expect(parse(text).agents[0]?.toolboxes).toEqual(['search', 'fles', 'shell']);
  });

  it('refuses an agent using the exec toolbox while exec is disabled, and exec enabled without commands', () => {
    const withExec = minimal.replace(
      'provider: default',
      'provider: default\n    toolboxes: [filesystem, exec]',
    );
    expect(problemsOf(withExec)).toEqual([
      'agents[0].toolboxes[1]: toolbox "exec" is disabled: set tools.exec.enabled: true and list tools.exec.commands',
    ]);
    expect(problemsOf(`${withExec}tools:\n  exec: { enabled: true }\n`)).toEqual([
      'tools.exec.commands: list at least one command when exec is enabled (e.g. commands: [ls, cat])',
    ]);
    const enabled = parse(`${withExec}tools:\n  exec: { enabled: true, commands: [ls] }\n`);
    expect(enabled.tools.exec).toMatchObject({ enabled: true, commands: ['ls'], shell: false });
  });

  it('checks the exec sandbox and the headers forwarded across origins, naming each path', () => {
    const text = `${minimal}tools:
  exec: { sandbox: off, read_only_paths: [/opt/toolchain, relative/dir, /opt/../root] }
  http: { forward_headers_on_redirect: [Accept, "bad header", Cookie] }
`;
    expect(problemsOf(text)).toEqual([
      'tools.exec.sandbox: must be one of "bwrap", "none"',
      'tools.exec.read_only_paths[1]: must be an absolute path without ".." (e.g. /opt/toolchain)',
      'tools.exec.read_only_paths[2]: must be an absolute path without ".." (e.g. /opt/toolchain)',
      'tools.http.forward_headers_on_redirect[1]: must be an HTTP header name (e.g. accept-language)',
      'tools.http.forward_headers_on_redirect[2]: credentials are never forwarded to another origin: remove it from the list',
    ]);
    const parsed = parse(`${minimal}tools:
  exec: { sandbox: none }
  http: { forward_headers_on_redirect: [X-Trace] }
`);
    expect(parsed.tools.exec.sandbox).toBe('none');
    expect(parsed.tools.http.forward_headers_on_redirect).toEqual(['x-trace']);
  });

  it('checks the tools section: unknown keys, hosts, and no patterns among hosts trusted with private addresses', () => {
    const text = `${minimal}tools:
  workspace: ./work
  filesystem: { read_only: true, max_read_bytes: 0 }
  http: { allow_hosts: ["*.example.com", "api.example.org", "bad host"], private_hosts: ["*.internal"] }
  browser: { private_hosts: ["*.internal"], max_pages: 0 }
  gti: {}
`;
    expect(problemsOf(text)).toEqual([
      'tools.filesystem.max_read_bytes: must be at least 1',
      'tools.http.allow_hosts[2]: must be a host name ("api.example.com"), an IP address, or "*.example.com"',
      'tools.http.private_hosts[0]: must name one host exactly (no "*." pattern)',
      'tools.browser.private_hosts[0]: must name one host exactly (no "*." pattern)',
      'tools.browser.max_pages: must be at least 1',
      'tools.gti: unknown key (expected one of: workspace, filesystem, search, exec, git, http, memory, project_context, browser)',
    ]);
  });

  it('refuses a browser whose responses in flight could not hold one of max_resource_bytes', () => {
    const text = `${minimal}tools:
  browser: { max_resource_bytes: 67108864, max_bytes_in_flight: 33554432, network_namespace: always }
`;
    expect(problemsOf(text)).toEqual([
      'tools.browser.network_namespace: must be one of "auto", "required", "off"',
    ]);
    expect(
      problemsOf(
        `${minimal}tools:\n  browser: { max_resource_bytes: 67108864, max_bytes_in_flight: 33554432 }\n`,
      ),
    ).toEqual([
      'tools.browser.max_bytes_in_flight: must be at least max_resource_bytes (a response of that size must fit): raise it or lower max_resource_bytes',
    ]);
  });

  it('rejects duplicate provider and agent names, pointing at the first one', () => {
    const text = `
providers:
  - { name: default, kind: fake, model: a }
  - { name: default, kind: fake, model: b }
agents:
  - { name: x, provider: default }
  - { name: y, provider: default }
  - { name: x, provider: default }
`;
    expect(problemsOf(text)).toEqual([
      'providers[1].name: duplicate provider name "default" (also providers[0])',
      'agents[2].name: duplicate agent name "x" (also agents[0])',
    ]);
  });

  it('rejects an unknown entry_agent', () => {
    expect(problemsOf(`${minimal}entry_agent: asistant\n`)).toEqual([
      'entry_agent: unknown agent "asistant" (did you mean "assistant"?)',
    ]);
  });

  it('lists every problem at once, in the order they appear in the file', () => {
    const text = `
providers:
  - name: default
    kind: fake
    temperature: hot
agents:
  - name: assistant
    provider: defualt
    tolboxes: []
worker:
  concurrency: 0
entry_agent: nobody
`;
    expect(problemsOf(text)).toEqual([
      'providers[0].model: required',
      'providers[0].temperature: expected a number, got "hot"',
      'agents[0].provider: unknown provider "defualt" (did you mean "default"?)',
      'agents[0].tolboxes: unknown key (did you mean "toolboxes"?)',
      'worker.concurrency: must be at least 1',
      'entry_agent: unknown agent "nobody" (known agents: assistant)',
    ]);
  });

  it('does not report references to an entry whose name is itself invalid', () => {
    const text = `
providers:
  - { kind: fake, model: a }
agents:
  - { name: assistant, provider: default }
`;
    expect(problemsOf(text)).toEqual(['providers[0].name: required']);
  });

  it('rejects a document that is not a mapping', () => {
    expect(problemsOf('')).toEqual(['(root): expected a mapping (key: value pairs), got an empty value']);
    expect(problemsOf('- a\n')).toEqual(['(root): expected a mapping (key: value pairs), got a list']);
  });

  it('reports YAML syntax errors with line and column', () => {
    expect(problemsOf(`${minimal}worker:\n  concurrency: 1\n concurrency: 2\n`)).toEqual([
      'line 11, column 1: All mapping items must start at the same column',
    ]);
    expect(problemsOf('a: 1\na: 2\n')).toEqual(['line 2, column 1: Map keys must be unique']);
  });

  it('reports an unset variable with its line, without what follows from its empty value', () => {
    // model: (empty) would be "expected string": a consequence of the variable, not a second mistake.
    const text = minimal.replace('fake-model', '${OPENAI_API_KEY}');
    expect(problemsOf(text)).toEqual([
      'line 5: environment variable OPENAI_API_KEY is not set (set it, or write ${OPENAI_API_KEY:-default})',
    ]);
  });

  it('reports unset variables together with every other problem, in the order of the file', () => {
    const text = [
      'providers:',
      '  - name: default',
      '    kind: fake',
      '    model: ${MODEL}',
      '    api_key: ${API_KEY}',
      '    rate_limit: { rpm: ${RPM}, window_ms: 1 }',
      'agents:',
      '  - name: assistant',
      '    provider: defualt',
      '    toolbox: [utils]',
      '    instructions: ${INSTRUCTIONS:-be brief}',
      '  - name: writer',
      '    provider: ${WRITER_PROVIDER}',
      'worker:',
      '  concurrency: 0',
      '  step_attempt: ${ATTEMPTS',
      '',
    ].join('\n');
    expect(problemsOf(text)).toEqual([
      'line 4: environment variable MODEL is not set (set it, or write ${MODEL:-default})',
      'line 5: environment variable API_KEY is not set (set it, or write ${API_KEY:-default})',
      // An unknown key stays a problem of its own, and so does another value on the line.
      'providers[0].api_key: unknown key (expected one of: name, kind, model, rate_limit, max_reply_chars, temperature)',
      'line 6: environment variable RPM is not set (set it, or write ${RPM:-default})',
      'providers[0].rate_limit.window_ms: must be at least 100',
      'agents[0].provider: unknown provider "defualt" (did you mean "default"?)',
      'agents[0].toolbox: unknown key (did you mean "toolboxes"?)',
      'line 13: environment variable WRITER_PROVIDER is not set (set it, or write ${WRITER_PROVIDER:-default})',
      'worker.concurrency: must be at least 1',
      'line 16: "${" is not closed by "}" on the same line (write $$ for a literal $)',
      'worker.step_attempt: unknown key (did you mean "step_attempts"?)',
    ]);
  });

  it('reports unset variables with YAML syntax errors', () => {
    expect(problemsOf('a: ${UNSET}\nb: 1\nb: 2\n')).toEqual([
      'line 1: environment variable UNSET is not set (set it, or write ${UNSET:-default})',
      'line 3, column 1: Map keys must be unique',
    ]);
  });

  it('throws a ConfigError naming the source and listing the problems', () => {
    let caught: unknown;
    try {
      parse(`${minimal}entry_agent: nobody\nagent: 1\n`, { sourceName: 'ratchet.yaml' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect(caught).toBeInstanceOf(RatchetError);
    const error = caught as ConfigError;
    expect(error.code).toBe('config_invalid');
    expect(error.retryable).toBe(false);
    expect(error.message).toBe(
      'invalid config ratchet.yaml:\n' +
        '  - entry_agent: unknown agent "nobody" (known agents: assistant)\n' +
        '  - agent: unknown key (did you mean "agents"?)',
    );
  });
});

describe('resolveEntryAgent', () => {
  it('is entry_agent when set, else the first agent', () => {
    const twoAgents = minimal.replace('agents:\n', 'agents:\n  - name: first\n    provider: default\n');
    expect(resolveEntryAgent(parse(twoAgents))).toBe('first');
    expect(resolveEntryAgent(parse(`${twoAgents}entry_agent: assistant\n`))).toBe('assistant');
  });
});

describe('parseConfigText: worker.shards', () => {
  it('takes shards below redis.shards and names one that does not exist', () => {
    const base = minimal;
    expect(parse(`${base}redis: {shards: 4}\nworker: {shards: [0, 3]}\n`).worker.shards).toEqual([0, 3]);
    expect(problemsOf(`${base}redis: {shards: 2}\nworker: {shards: [1, 2]}\n`)).toEqual([
      'worker.shards[1]: shard 2 does not exist: redis.shards is 2, so shards are 0 to 1',
    ]);
  });
});
