// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config text with ${VAR} references.
import './register-fake-provider.js';
import { describe, expect, it } from 'vitest';
import { formatConfigSummary, parseConfigText } from '../../src/config/index.js';
import { configParser } from './config-parser.js';

const { parse, problemsOf } = configParser({ knownToolboxes: ['utils'] });

const base = `
providers:
  - { name: default, kind: fake, model: fake-model }
agents:
  - name: assistant
    provider: default
    toolboxes: [utils, everything]
`;

describe('mcp_servers', () => {
  it('reads stdio and HTTP servers with their defaults, expanding ${VAR} in env and headers', () => {
    const config = parse(
      `${base}mcp_servers:
  - name: everything
    command: npx
    args: [mcp-server-everything]
    env: { API_KEY: "\${EVERYTHING_KEY}" }
  - name: remote
    url: https://mcp.example.com/mcp
    headers: { Authorization: "Bearer \${REMOTE_TOKEN}" }
    timeout_ms: 5000
`,
      { env: { EVERYTHING_KEY: 'k-123', REMOTE_TOKEN: 't-456' } },
    );
    expect(config.mcp_servers).toEqual([
      {
        name: 'everything',
        transport: 'stdio',
        command: 'npx',
        args: ['mcp-server-everything'],
        env: { API_KEY: 'k-123' },
        cwd: undefined,
        timeout_ms: 60_000,
        connect_timeout_ms: 30_000,
      },
      {
        name: 'remote',
        transport: 'http',
        url: 'https://mcp.example.com/mcp',
        headers: { Authorization: 'Bearer t-456' },
        timeout_ms: 5000,
        connect_timeout_ms: 30_000,
      },
    ]);
  });

  it('lets agents name MCP servers as toolboxes, and still rejects unknown toolboxes', () => {
    expect(problemsOf(base)).toEqual([
      'agents[0].toolboxes[1]: unknown toolbox "everything" (known toolboxes: utils)',
    ]);
    expect(problemsOf(`${base}mcp_servers:\n  - { name: everythin, command: x }\n`)).toEqual([
      'agents[0].toolboxes[1]: unknown toolbox "everything" (did you mean "everythin"?)',
    ]);
    expect(parse(`${base}mcp_servers:\n  - { name: everything, command: x }\n`).agents[0]?.toolboxes).toEqual(
      ['utils', 'everything'],
    );
  });

  it('rejects a server named like a built-in toolbox, and duplicate server names', () => {
    const text = `${base}mcp_servers:
  - { name: everything, command: x }
  - { name: utils, command: y }
  - { name: everything, url: "http://127.0.0.1:3001/mcp" }
`;
    expect(problemsOf(text)).toEqual([
      'mcp_servers[1].name: "utils" is the name of a built-in toolbox: give the MCP server another name',
      'mcp_servers[2].name: duplicate MCP server name "everything" (also mcp_servers[0])',
    ]);
  });

  it('asks for exactly one of command and url, and keeps the other fields to their transport', () => {
    const text = `${base}mcp_servers:
  - { name: everything }
  - { name: a, command: x, url: "https://a.example" }
  - { name: b, command: x, headers: { A: b } }
  - { name: c, url: "https://c.example", args: [x], env: { A: b } }
  - { name: d, command: x, tiemout_ms: 5 }
`;
    expect(problemsOf(text)).toEqual([
      'mcp_servers[0]: give "command" (a stdio server, with optional args, env, cwd) or "url" (an HTTP server, with optional headers)',
      'mcp_servers[1]: give either "command" (a stdio server) or "url" (an HTTP server), not both',
      'mcp_servers[2].headers: only for HTTP servers (with "url")',
      'mcp_servers[3].args: only for stdio servers (with "command")',
      'mcp_servers[3].env: only for stdio servers (with "command")',
      'mcp_servers[4].tiemout_ms: unknown key (did you mean "timeout_ms"?)',
    ]);
  });

  it('refuses plain http to other hosts unless allow_http is set, since headers would travel in clear', () => {
    const text = (url: string, extra = '') =>
      `${base}mcp_servers:\n  - { name: everything, url: "${url}"${extra} }\n`;
    expect(problemsOf(text('http://mcp.internal:8080/mcp'))).toEqual([
      expect.stringMatching(
        /^mcp_servers\[0\]\.url: plain http:\/\/ sends the headers unencrypted: use https:\/\//,
      ),
    ]);
    expect(parse(text('http://mcp.internal:8080/mcp', ', allow_http: true')).mcp_servers[0]).toMatchObject({
      url: 'http://mcp.internal:8080/mcp',
    });
    for (const url of ['http://127.0.0.1:3001/mcp', 'http://localhost/mcp', 'http://[::1]:80/mcp']) {
      expect(parse(text(url)).mcp_servers[0]).toMatchObject({ url });
    }
    expect(problemsOf(text('ftp://files.example'))).toEqual([
      'mcp_servers[0].url: must be an http:// or https:// URL (got ftp:)',
    ]);
    expect(problemsOf(text('not a url'))).toEqual([
      'mcp_servers[0].url: must be an absolute http:// or https:// URL',
    ]);
  });

  it('lists the servers in the config summary without their env, headers or URL', () => {
    const loaded = parseConfigText(
      `${base}mcp_servers:
  - { name: everything, command: npx, env: { KEY: secret-env-value } }
  - { name: remote, url: "https://user:pw@mcp.example.com/mcp?token=abc", headers: { A: secret-header } }
`,
      { env: {}, configDir: '/configs', knownToolboxes: ['utils'] },
    );
    const summary = formatConfigSummary(loaded);
    expect(summary).toContain('mcp servers:\n  everything: stdio (npx)\n  remote: http (mcp.example.com)');
    for (const secret of ['secret-env-value', 'secret-header', 'pw', 'token=abc']) {
      expect(summary).not.toContain(secret);
    }
  });
});
