import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { repoRoot } from './mcp-client.js';
import { ToolboxWorld } from './toolbox-world.js';

const run = promisify(execFile);

let world: ToolboxWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** The MCP Inspector's CLI (a client we do not own) against `ratchet mcp --toolboxes`: its JSON answer. */
// biome-ignore lint/suspicious/noExplicitAny: a test reads any field of the answer and asserts on it
async function inspect(w: ToolboxWorld, args: string[]): Promise<any> {
  const servers = join(w.dir, 'mcp-servers.json');
  writeFileSync(
    servers,
    JSON.stringify({
      mcpServers: {
        toolboxes: {
          ...w.mcpCommand('filesystem'),
          env: { TOOLBOX_TEST_KEY: w.env.TOOLBOX_TEST_KEY },
        },
      },
    }),
  );
  // It reads its own package.json relative to the working directory: it runs from bin/ (see mcp-inspector.int.test.ts).
  const { stdout } = await run(
    join(repoRoot, 'node_modules/.bin/mcp-inspector-cli'),
    ['--cli', '--config', servers, '--server', 'toolboxes', ...args],
    { cwd: join(repoRoot, 'bin'), timeout: 60_000 },
  );
  return JSON.parse(stdout);
}

describe('the MCP Inspector CLI against the toolbox MCP server', () => {
  it('lists the filesystem tools and reads a workspace file; a path escape is an error result', async () => {
    world = new ToolboxWorld();
    const listed = await inspect(world, ['--method', 'tools/list']);
    const names = listed.tools.map((tool: { name: string }) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['read_file', 'write_file', 'list_directory']));

    const call = (path: string) =>
      inspect(world as ToolboxWorld, [
        '--method',
        'tools/call',
        '--tool-name',
        'read_file',
        '--tool-arg',
        `path=${path}`,
      ]);
    const read = await call('notes.txt');
    expect(read.content[0].text).toContain('the workspace file');
    const escaped = await call('../outside.txt');
    expect(escaped.isError).toBe(true);
    expect(escaped.content[0].text).not.toContain('OUTSIDE-MARKER-CONTENT');
    // Three clients, each starting the server: generous on a loaded machine.
  }, 180_000);
});
