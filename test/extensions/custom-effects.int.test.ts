import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { textOf } from '../../src/chat/index.js';
import { defineEffect } from '../../src/extensions/effects.js';
import type { Extensions } from '../../src/extensions/extensions.js';
import { ExtensionWorld } from '../helpers/extension-world.js';

// Effects registered in code, named in the config by kind, run by a real worker on real Redis.
let world: ExtensionWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const maskWord = defineEffect({
  kind: 'mask_word',
  options: z.strictObject({ word: z.string().min(1), replacement: z.string().default('[masked]') }),
  plan: (view, { options }) => ({
    kind: 'messages',
    messages: view.messages.map((message) => ({
      ...message,
      parts: message.parts.map((part) =>
        part.type === 'text'
          ? { ...part, text: part.text.replaceAll(options.word, options.replacement) }
          : part,
      ),
    })),
  }),
});

const broken = defineEffect({
  kind: 'broken',
  options: z.strictObject({}),
  plan: () => {
    throw new Error('the scrubber lost its list');
  },
});

function agentConfig(effects: unknown[], options: Record<string, unknown> = {}, replies: unknown[] = []) {
  return {
    providers: [
      {
        name: 'model',
        kind: 'scripted',
        model: 'test',
        replies: replies.length > 0 ? replies : [{ text: 'done' }],
        record_calls: 'calls.jsonl',
      },
    ],
    agents: [{ name: 'agent', provider: 'model', toolboxes: ['test'], effects, options }],
  };
}

async function run(config: Record<string, unknown>, extensions: Extensions, input: string) {
  world = new ExtensionWorld(config, extensions);
  await world.start();
  const { runId, sessionId } = await world.engine.startRun({ input });
  const record = await world.engine.waitForRun(runId, { timeoutMs: 30_000 });
  return { record, sessionId, calls: world.modelCalls(), chat: await world.engine.readChat(sessionId) };
}

describe('a custom effect', () => {
  it('changes what the model is sent, with its options from the config; the transcript keeps everything', async () => {
    const { record, calls, chat } = await run(
      agentConfig([{ kind: 'mask_word', params: { word: 'swordfish' } }]),
      { effects: [maskWord, broken] },
      'the password is swordfish',
    );
    expect(record.status).toBe('completed');
    expect(calls).toHaveLength(1);
    const sent = JSON.stringify(calls[0]?.messages);
    expect(sent).not.toContain('swordfish');
    expect(sent).toContain('the password is [masked]');
    expect(chat.map((message) => textOf(message)).join('\n')).toContain('the password is swordfish');
  });

  it('that throws fails the run with effect_failed naming it, and the model is never called', async () => {
    const { record, calls } = await run(
      agentConfig([{ kind: 'broken' }]),
      { effects: [maskWord, broken] },
      'hello',
    );
    expect(record.status).toBe('failed');
    expect(record.error?.code).toBe('effect_failed');
    expect(record.error?.message).toContain('the effect "broken" threw (the scrubber lost its list)');
    expect(calls).toHaveLength(0);
  });
});

describe('options.max_iterations: 0', () => {
  it('puts no limit on model calls when the agent has a deadline: a run takes more than the default 10', async () => {
    const add = (a: number) => ({ tool_calls: [{ name: 'add', arguments: { a, b: 1 } }] });
    const replies = [...Array.from({ length: 12 }, (_, index) => add(index)), { text: 'added twelve times' }];
    const { record, calls } = await run(
      agentConfig([], { max_iterations: 0, timeout_s: 120 }, replies),
      {},
      'add, twelve times',
    );
    expect(record.status).toBe('completed');
    expect(record.result).toBe('added twelve times');
    expect(calls).toHaveLength(13);
  });
});
