import { describe, expect, it } from 'vitest';
import '../../src/models/index.js';
import { parseConfigText } from '../../src/config/index.js';
import { silentLogger } from '../../src/log/index.js';
import { toolOutputOfMcpResult } from '../../src/mcp/client/mcp-result.js';
import { mcpToolOf } from '../../src/mcp/client/mcp-tool.js';
import { createRedactor } from '../../src/secrets/index.js';
import {
  type AnyTool,
  type ListedTool,
  prepareToolCall,
  type ToolBox,
  toolDefinitionOf,
} from '../../src/tools/index.js';
import { buildAgents } from '../../src/worker/index.js';

/** The echo tool's input schema as the model is offered it: the server's own, less its `$schema`. */
const echoSchema = {
  type: 'object' as const,
  properties: { message: { type: 'string', description: 'Message to echo' } },
  required: ['message'],
};

const echoListing: ListedTool = {
  name: 'echo',
  description: 'Echoes back the input string',
  inputSchema: { ...echoSchema, $schema: 'http://json-schema.org/draft-07/schema#' },
  annotations: { readOnlyHint: true },
};

const unused = async () => 'unused';

describe('mcpToolOf', () => {
  it("offers the model the server's own name, description and JSON Schema", () => {
    expect(toolDefinitionOf(mcpToolOf(echoListing, unused))).toEqual({
      name: 'echo',
      description: 'Echoes back the input string',
      inputSchema: echoSchema,
    });
    expect(
      toolDefinitionOf(mcpToolOf({ ...echoListing, description: undefined, title: 'Echo' }, unused)),
    ).toMatchObject({ description: 'Echo' });
  });

  it('declares a tool idempotent only when the server says it is read-only or idempotent', () => {
    const idempotent = (annotations: ListedTool['annotations']) =>
      mcpToolOf({ ...echoListing, annotations }, unused).idempotent;
    expect(idempotent(undefined)).toBe(false);
    expect(idempotent({})).toBe(false);
    expect(idempotent({ readOnlyHint: false, idempotentHint: false })).toBe(false);
    expect(idempotent({ readOnlyHint: true })).toBe(true);
    expect(idempotent({ idempotentHint: true })).toBe(true);
  });

  it('checks arguments against the schema before a call, with a message naming the field', () => {
    const tool = mcpToolOf(echoListing, unused);
    const prepared = prepareToolCall({ name: 'echo', arguments: '{"message": 7}' }, tool, ['echo']);
    expect(prepared).toEqual({
      ok: false,
      outcome: {
        content: expect.stringMatching(/^invalid arguments for tool "echo": message: .*string/),
        isError: true,
      },
    });
    expect(prepareToolCall({ name: 'echo', arguments: '{"message": "hi"}' }, tool, ['echo'])).toMatchObject({
      ok: true,
      input: { message: 'hi' },
    });
  });

  it('leaves a schema zod cannot express to the server, still requiring an object', () => {
    const tool = mcpToolOf(
      {
        name: 'conditional',
        // draft-07 `definitions`, which zod's converter does not resolve
        inputSchema: {
          type: 'object',
          properties: { a: { $ref: '#/definitions/count' } },
          definitions: { count: { type: 'integer' } },
        },
      },
      unused,
    );
    expect(prepareToolCall({ name: 'conditional', arguments: '{"a": 1}' }, tool, [])).toMatchObject({
      ok: true,
      input: { a: 1 },
    });
    expect(prepareToolCall({ name: 'conditional', arguments: '[1]' }, tool, [])).toMatchObject({ ok: false });
  });

  it('hands the call to the connection with the parsed input and the context', async () => {
    const calls: unknown[] = [];
    const tool = mcpToolOf(echoListing, async (name, input, context) => {
      calls.push({ name, input, key: context.idempotencyKey });
      return 'done';
    });
    const context = { idempotencyKey: 'k' } as Parameters<AnyTool['handler']>[0];
    expect(await tool.handler(context, { message: 'x' })).toBe('done');
    expect(calls).toEqual([{ name: 'echo', input: { message: 'x' }, key: 'k' }]);
  });
});

describe('toolOutputOfMcpResult', () => {
  it('joins the text of the content parts and describes what is not text', () => {
    expect(toolOutputOfMcpResult({ content: [{ type: 'text', text: 'Echo: hi' }] })).toBe('Echo: hi');
    expect(
      toolOutputOfMcpResult({
        content: [
          { type: 'text', text: 'Here it is:' },
          { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
          { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
          { type: 'resource', resource: { uri: 'file:///notes.txt', text: 'the notes' } },
          {
            type: 'resource',
            resource: { uri: 'file:///a.bin', blob: 'AAAA', mimeType: 'application/octet-stream' },
          },
          { type: 'resource_link', uri: 'file:///big.csv', name: 'big.csv' },
          { type: 'hologram' },
        ],
      }),
    ).toBe(
      [
        'Here it is:',
        '[image image/png, 8 bytes, not shown]',
        '[audio audio/wav, 3 bytes, not shown]',
        '[resource file:///notes.txt]\nthe notes',
        '[resource file:///a.bin application/octet-stream, 3 bytes, not shown]',
        '[resource link file:///big.csv (big.csv)]',
        '[hologram content, not shown]',
      ].join('\n\n'),
    );
  });

  it('returns structured content as JSON when there is no content', () => {
    expect(toolOutputOfMcpResult({ content: [], structuredContent: { sum: 3 } })).toEqual({ sum: 3 });
    expect(toolOutputOfMcpResult({ toolResult: { legacy: true } })).toEqual({ legacy: true });
    expect(toolOutputOfMcpResult({ content: [] })).toBe('');
  });

  it('throws the text of an isError result, so the model gets an error result', () => {
    expect(() =>
      toolOutputOfMcpResult({ content: [{ type: 'text', text: 'the widget is jammed' }], isError: true }),
    ).toThrow('the widget is jammed');
    expect(() => toolOutputOfMcpResult({ content: [], isError: true })).toThrow(
      'the MCP server reported an error without details',
    );
    expect(() => toolOutputOfMcpResult({ content: 'nope' })).toThrow('not a valid MCP result');
  });
});

describe('createRedactor', () => {
  it('hides secret values and the token part of "Bearer <token>" values', () => {
    const redact = createRedactor(['Bearer abcdefgh12345', 'env-secret-value', 'ab']);
    expect(redact('sent Bearer abcdefgh12345 and abcdefgh12345 with env-secret-value; ab stays')).toBe(
      'sent [redacted] and [redacted] with [redacted]; ab stays',
    );
  });
});

describe('agents with a toolbox whose tools change', () => {
  it('offers the tools the toolbox has at each request', () => {
    let tools: AnyTool[] = [];
    // As an MCP server's toolbox: its tools change while the worker runs, and it says so.
    const toolbox: ToolBox = {
      name: 'everything',
      dynamic: true,
      get tools() {
        return tools;
      },
    };
    const config = parseConfigText(
      [
        'providers:',
        '  - { name: script, kind: scripted, model: m, replies: [{ text: hi }] }',
        'agents:',
        '  - { name: a, provider: script, toolboxes: [everything] }',
        'mcp_servers:',
        '  - { name: everything, command: x }',
      ].join('\n'),
      { env: {}, configDir: '.', knownToolboxes: [] },
    ).config;
    const agent = buildAgents(config, '.', [toolbox], silentLogger()).get('a');
    expect(agent?.tools.map((tool) => tool.name)).toEqual(['ask_user', 'report_progress']);
    tools = [mcpToolOf(echoListing, unused)];
    expect(agent?.tools.map((tool) => tool.name)).toEqual(['echo', 'ask_user', 'report_progress']);
  });

  it('builds a fixed list once when no toolbox changes', () => {
    const config = parseConfigText(
      [
        'providers:',
        '  - { name: script, kind: scripted, model: m, replies: [{ text: hi }] }',
        'agents:',
        '  - { name: a, provider: script }',
      ].join('\n'),
      { env: {}, configDir: '.', knownToolboxes: [] },
    ).config;
    const agent = buildAgents(config, '.', [], silentLogger()).get('a');
    expect(agent?.tools.map((tool) => tool.name)).toEqual(['ask_user', 'report_progress']);
    expect(agent?.tools).toBe(agent?.tools);
  });
});
