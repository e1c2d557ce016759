import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createToolBox,
  defineTool,
  findTool,
  interruptedPolicyOf,
  prepareToolCall,
  runToolHandler,
  type Tool,
  type ToolContext,
  toolDefinitionOf,
  toolDefinitions,
} from '../../src/tools/index.js';
import { toolContext } from '../helpers/tool-calls.js';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  inputSchema: z.strictObject({
    a: z.coerce.number().describe('the first number'),
    b: z.number().int().default(1),
  }),
  idempotent: true,
  handler: async (_context, input) => input.a + input.b,
});

const book = defineTool({
  name: 'book',
  description: 'Books a flight.',
  inputSchema: z.strictObject({
    passengers: z.array(z.strictObject({ name: z.string().min(1) })).min(1),
  }),
  idempotent: false,
  handler: async () => 'booked',
});

const noInput = defineTool({
  name: 'now',
  description: 'Takes no input.',
  inputSchema: z.strictObject({}),
  idempotent: true,
  handler: async () => ({ ok: true }),
});

function context(signal?: AbortSignal): ToolContext {
  return toolContext(signal ? { signal } : {});
}

function toolReturning(handler: Tool['handler']): Tool {
  return { name: 'probe', description: 'probe', inputSchema: z.unknown(), idempotent: true, handler };
}

describe('prepareToolCall', () => {
  it('an unknown tool is an error result listing the available names', () => {
    const prepared = prepareToolCall({ name: 'ad', arguments: '{}' }, undefined, ['add', 'book']);
    expect(prepared).toEqual({
      ok: false,
      outcome: { isError: true, content: 'unknown tool "ad". Available tools: add, book.' },
    });
  });

  it('an unknown tool with no tools available says so', () => {
    const prepared = prepareToolCall({ name: 'x', arguments: '{}' }, undefined, []);
    expect(prepared.ok).toBe(false);
    if (!prepared.ok) expect(prepared.outcome.content).toContain('(none)');
  });

  it('arguments that are not JSON are an error result naming the tool', () => {
    const prepared = prepareToolCall({ name: 'add', arguments: '{"a": 1,' }, add, ['add']);
    expect(prepared.ok).toBe(false);
    if (prepared.ok) return;
    expect(prepared.outcome.isError).toBe(true);
    expect(prepared.outcome.content).toMatch(/^invalid arguments for tool "add": not valid JSON \(.+\)/);
    expect(prepared.outcome.content).toContain('Send the arguments as a JSON object.');
  });

  it('a schema violation names the field path and the zod message', () => {
    const prepared = prepareToolCall(
      { name: 'book', arguments: '{"passengers":[{"name":"Ann"},{"name":""}]}' },
      book,
      ['book'],
    );
    expect(prepared.ok).toBe(false);
    if (prepared.ok) return;
    const expectedMessage = z.string().min(1).safeParse('').error?.issues[0]?.message;
    expect(expectedMessage).toBeTruthy();
    expect(prepared.outcome).toEqual({
      isError: true,
      content: `invalid arguments for tool "book": passengers[1].name: ${expectedMessage}`,
    });
  });

  it('lists every violation and names an unexpected key', () => {
    const prepared = prepareToolCall({ name: 'add', arguments: '{"a":"x","b":1.5,"c":0}' }, add, ['add']);
    expect(prepared.ok).toBe(false);
    if (prepared.ok) return;
    expect(prepared.outcome.content).toContain('a: ');
    expect(prepared.outcome.content).toContain('b: ');
    expect(prepared.outcome.content).toContain('"c"');
  });

  it('a root-level violation is named (root)', () => {
    const prepared = prepareToolCall({ name: 'add', arguments: '[1, 2]' }, add, ['add']);
    expect(prepared.ok).toBe(false);
    if (!prepared.ok) expect(prepared.outcome.content).toMatch(/: \(root\): /);
  });

  it('an empty or blank arguments string is treated as {}', () => {
    for (const text of ['', '   \n']) {
      const prepared = prepareToolCall({ name: 'now', arguments: text }, noInput, ['now']);
      expect(prepared).toEqual({ ok: true, tool: noInput, input: {} });
    }
    const missing = prepareToolCall({ name: 'add', arguments: '' }, add, ['add']);
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.outcome.content).toContain('a: ');
  });

  it('valid arguments give the input parsed by the schema (coerced, defaults applied)', () => {
    const prepared = prepareToolCall({ name: 'add', arguments: '{"a":"41"}' }, add, ['add']);
    expect(prepared).toEqual({ ok: true, tool: add, input: { a: 41, b: 1 } });
  });
});

describe('runToolHandler', () => {
  it('renders a string output as is', async () => {
    const outcome = await runToolHandler(
      toolReturning(async () => 'plain "text"'),
      {},
      context(),
    );
    expect(outcome).toEqual({ content: 'plain "text"', isError: false });
  });

  it('renders a JSON output as JSON text', async () => {
    const outcome = await runToolHandler(
      toolReturning(async () => ({ n: 1, list: [true, null, 'x'] })),
      {},
      context(),
    );
    expect(outcome).toEqual({ content: '{"n":1,"list":[true,null,"x"]}', isError: false });
    const number = await runToolHandler(add, { a: 2, b: 3 }, context());
    expect(number).toEqual({ content: '5', isError: false });
  });

  it('passes the context and the input to the handler', async () => {
    let seen: unknown;
    const tool = toolReturning(async (toolContext, input) => {
      seen = { key: toolContext.idempotencyKey, call: toolContext.toolCallId, input };
      return '';
    });
    await runToolHandler(tool, { q: 1 }, context());
    expect(seen).toEqual({ key: 'key-1', call: 'call_1_0', input: { q: 1 } });
  });

  it('a thrown error becomes an error result with the message', async () => {
    const outcome = await runToolHandler(
      toolReturning(async () => {
        throw new Error('disk full');
      }),
      {},
      context(),
    );
    expect(outcome).toEqual({ content: 'tool "probe" failed: disk full', isError: true });
  });

  it('a thrown non-Error is rendered too', async () => {
    const outcome = await runToolHandler(
      toolReturning(async () => {
        throw 'plain string';
      }),
      {},
      context(),
    );
    expect(outcome).toEqual({ content: 'tool "probe" failed: plain string', isError: true });
  });

  it('when the signal is aborted, the error propagates instead of becoming a result', async () => {
    const controller = new AbortController();
    const abortError = new Error('aborted by cancel');
    const tool = toolReturning(async () => {
      controller.abort();
      throw abortError;
    });
    await expect(runToolHandler(tool, {}, context(controller.signal))).rejects.toBe(abortError);
  });
});

describe('tool definitions', () => {
  it('turns the zod schema into a JSON Schema without $schema', () => {
    const definition = toolDefinitionOf(add);
    expect(definition.name).toBe('add');
    expect(definition.description).toBe('Adds two numbers.');
    expect(definition.inputSchema).not.toHaveProperty('$schema');
    expect(definition.inputSchema).toMatchObject({
      type: 'object',
      properties: {
        a: { type: 'number', description: 'the first number' },
        b: { type: 'integer', default: 1 },
      },
      additionalProperties: false,
    });
    // Input side: a field with a default is optional for the model.
    expect(definition.inputSchema.required).toEqual(['a']);
  });

  it('toolDefinitions gives one definition per name, the first toolbox winning', () => {
    const otherAdd = defineTool({ ...add, description: 'A different add.' });
    const first = createToolBox('first', [add, book]);
    const second = createToolBox('second', [otherAdd, noInput]);
    const definitions = toolDefinitions([first, second]);
    expect(definitions.map((definition) => definition.name)).toEqual(['add', 'book', 'now']);
    expect(definitions[0]?.description).toBe('Adds two numbers.');
    expect(toolDefinitions([second, first])[0]?.description).toBe('A different add.');
  });

  it('findTool searches the toolboxes in order', () => {
    const otherAdd = defineTool({ ...add, description: 'A different add.' });
    const first = createToolBox('first', [book, add]);
    const second = createToolBox('second', [otherAdd, noInput]);
    expect(findTool([first, second], 'add')).toBe(add);
    expect(findTool([second, first], 'add')).toBe(otherAdd);
    expect(findTool([first, second], 'now')).toBe(noInput);
    expect(findTool([first, second], 'missing')).toBeUndefined();
  });

  it('createToolBox rejects two tools of one name', () => {
    expect(() => createToolBox('dupes', [add, book, add])).toThrow(
      'toolbox "dupes" has two tools named "add"',
    );
    expect(createToolBox('ok', [add, book]).tools).toEqual([add, book]);
  });
});

describe('interruptedPolicyOf', () => {
  it('defaults to rerun for idempotent tools and outcome_unknown otherwise', () => {
    expect(interruptedPolicyOf({ idempotent: true })).toBe('rerun');
    expect(interruptedPolicyOf({ idempotent: false })).toBe('outcome_unknown');
  });

  it('an explicit policy wins', () => {
    expect(interruptedPolicyOf({ idempotent: true, onInterrupted: 'outcome_unknown' })).toBe(
      'outcome_unknown',
    );
    expect(interruptedPolicyOf({ idempotent: false, onInterrupted: 'rerun' })).toBe('rerun');
  });
});
