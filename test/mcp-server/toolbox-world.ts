// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config text with ${VAR} references.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { inject } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis, type RedisClient } from '../../src/redis/connection.js';
import { repoRoot } from './mcp-client.js';

/** The form an elicitation asks the client to fill: its fields by name. */
export interface ElicitSchema {
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
}

/** A secret the config knows (a provider's key): every tool result must hide it. */
export const toolboxSecret = 'sk-toolbox-mcp-secret-7f3a9c2e41';

/**
 * A config for the toolbox MCP server in a directory of its own: a workspace with a file in it, exec allowed
 * `echo` and `cat` in the bubblewrap sandbox, the http toolbox with its default guard, memory on the test
 * Redis under a key prefix of its own, and an agent that marks `write_file` as needing approval.
 */
export class ToolboxWorld {
  readonly dir: string;
  readonly workspace: string;
  readonly configPath: string;
  readonly prefix = `t-${randomBytes(6).toString('hex')}`;
  readonly env: Record<string, string>;

  /**
   * `api`: the config's api section (tokens, mcp_toolboxes). `tools`: sections of the config's `tools` added
   * to the defaults here (git, search, browser settings).
   */
  constructor(options: { api?: Record<string, unknown>; tools?: Record<string, unknown> } = {}) {
    this.dir = mkdtempSync(join(tmpdir(), 'ratchet-toolbox-mcp-'));
    this.workspace = join(this.dir, 'workspace');
    mkdirSync(this.workspace);
    writeFileSync(join(this.workspace, 'notes.txt'), 'the workspace file\n');
    writeFileSync(join(this.workspace, 'leak.txt'), `the key is ${toolboxSecret}\n`);
    // Outside the workspace, beside the config: what a path escape would reach.
    writeFileSync(join(this.dir, 'outside.txt'), 'OUTSIDE-MARKER-CONTENT\n');
    this.configPath = join(this.dir, 'ratchet.json');
    writeFileSync(
      this.configPath,
      JSON.stringify({
        providers: [{ name: 'model', kind: 'openai', model: 'gpt-4o-mini', api_key: '${TOOLBOX_TEST_KEY}' }],
        agents: [
          {
            name: 'agent',
            provider: 'model',
            instructions: 'x',
            toolboxes: ['filesystem', 'exec', 'http', 'memory'],
            tools: { write_file: { requires_approval: true } },
          },
        ],
        tools: {
          workspace: './workspace',
          exec: { enabled: true, commands: ['echo', 'cat'], sandbox: 'bwrap' },
          ...options.tools,
        },
        redis: { url: inject('redisUrl'), prefix: this.prefix },
        ...(options.api ? { api: options.api } : {}),
      }),
    );
    this.env = { ...(process.env as Record<string, string>), TOOLBOX_TEST_KEY: toolboxSecret };
  }

  /** `ratchet mcp --toolboxes NAMES` on this config, as an MCP client is told to start it. */
  mcpCommand(toolboxes: string): { command: string; args: string[] } {
    return {
      command: process.execPath,
      args: [join(repoRoot, 'bin/ratchet.mjs'), 'mcp', '--config', this.configPath, '--toolboxes', toolboxes],
    };
  }

  /**
   * Starts `ratchet mcp --toolboxes NAMES` through the SDK's stdio client, as an MCP client starts it; with
   * `elicit`, the client declares elicitation and answers every form with it. `clients` collects the client,
   * for the test's afterEach to close.
   */
  async connect(
    clients: Client[],
    options: {
      toolboxes: string;
      /** `--require-approval`: tools approved before each call, besides write_file (the agent's). */
      requireApproval?: string;
      elicit?: (message: string, schema: ElicitSchema) => ElicitResult;
    },
  ): Promise<Client> {
    const command = this.mcpCommand(options.toolboxes);
    if (options.requireApproval) command.args.push('--require-approval', options.requireApproval);
    const transport = new StdioClientTransport({
      ...command,
      cwd: repoRoot,
      env: this.env,
      stderr: 'pipe',
    });
    const client = new Client(
      { name: 'toolbox-test', version: '1' },
      options.elicit ? { capabilities: { elicitation: {} } } : {},
    );
    const { elicit } = options;
    if (elicit) {
      client.setRequestHandler(ElicitRequestSchema, async (request) =>
        elicit(request.params.message, (request.params as { requestedSchema: ElicitSchema }).requestedSchema),
      );
    }
    clients.push(client);
    await client.connect(transport);
    return client;
  }

  /** Removes the directory and the memory notes written under the prefix. */
  async close(): Promise<void> {
    rmSync(this.dir, { recursive: true, force: true });
    const redis: RedisClient = createRedis({ url: inject('redisUrl'), logger: silentLogger(), name: 'test' });
    try {
      const keys = await redis.keys(`${this.prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
    } finally {
      await closeRedis(redis);
    }
  }
}
