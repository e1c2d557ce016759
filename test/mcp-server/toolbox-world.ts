// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config text with ${VAR} references.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis, type RedisClient } from '../../src/redis/connection.js';
import { repoRoot } from './mcp-client.js';

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

  /** `api`: the config's api section (tokens, mcp_toolboxes). */
  constructor(options: { api?: Record<string, unknown> } = {}) {
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
