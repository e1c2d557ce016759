import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Message } from '../../src/chat/index.js';
import { RatchetError } from '../../src/errors/index.js';
import { defineCoordinator, defineStopCondition } from '../../src/extensions/coordinators.js';
import { defineEffect } from '../../src/extensions/effects.js';
import { coordinatorSelection, teamKinds } from '../../src/workflows/core/coordinators.js';
import { effectRegistry, planModelCall, resolveEffects } from '../../src/workflows/core/effects/index.js';
import type { TeamRuntime } from '../../src/workflows/core/team.js';
import { conversation, planInput } from './effects/conversation.js';

// Kinds written in code go through the same pure core as the built-ins: the planner runs a custom effect in
// its priority's place and names it when it fails; a custom coordinator's choice becomes a selection, and a
// bad one fails with coordinator_invalid naming it.

const chat = conversation('Mail bob@example.com', []);

function failure(run: () => unknown): RatchetError {
  try {
    run();
  } catch (error) {
    if (error instanceof RatchetError) return error;
    throw error;
  }
  throw new Error('expected a RatchetError');
}

describe('a custom effect in the planner', () => {
  const shout = defineEffect({
    kind: 'shout',
    options: z.strictObject({ suffix: z.string().default('!') }),
    plan: (view, { options, agent, iteration }) => ({
      kind: 'messages',
      messages: view.messages.map((message) => ({
        ...message,
        parts: message.parts.map((part) =>
          part.type === 'text'
            ? { ...part, text: `${part.text.toUpperCase()}${options.suffix} (${agent} ${iteration})` }
            : part,
        ),
      })),
    }),
  });
  const registry = effectRegistry([shout]);

  it('is resolved with its definition and runs with its options and the step in its context', () => {
    const effects = resolveEffects({
      configured: [{ kind: 'shout', params: { suffix: '?' } }],
      contextWindow: 0,
      contextThreshold: 0.8,
      registry,
    });
    const plan = planModelCall({ ...planInput(chat, { effects }), agent: 'mailer' });
    if (plan.kind !== 'send') throw new Error('expected a send plan');
    const texts = plan.messages.flatMap((message: Message) =>
      message.parts.map((part) => (part.type === 'text' ? part.text : '')),
    );
    expect(texts).toContain('MAIL BOB@EXAMPLE.COM? (mailer 1)');
    expect(plan.applied).toEqual(['shout']);
  });

  it('that asks for a summary outside the chat fails with effect_failed naming it', () => {
    const bad = defineEffect({
      kind: 'bad_cut',
      options: z.strictObject({}),
      plan: () => ({ kind: 'compact', upTo: 999 }),
    });
    const effects = resolveEffects({
      configured: [{ kind: 'bad_cut', params: {} }],
      contextWindow: 0,
      contextThreshold: 0.8,
      registry: effectRegistry([bad]),
    });
    const error = failure(() => planModelCall(planInput(chat, { effects })));
    expect(error.code).toBe('effect_failed');
    expect(error.message).toMatch(/^the effect "bad_cut" asked to summarise up to 999, outside/);
  });

  it('is refused when the worker does not know it, and a built-in name cannot be taken', () => {
    expect(
      failure(() =>
        resolveEffects({
          configured: [{ kind: 'shout', params: {} }],
          contextWindow: 0,
          contextThreshold: 0.8,
        }),
      ).message,
    ).toContain('the effect kind "shout" is not registered on this worker');
    expect(failure(() => effectRegistry([{ ...shout, kind: 'compact' }])).message).toContain(
      'the effect kind "compact" is registered twice (it is a built-in kind)',
    );
  });
});

describe('a custom coordinator', () => {
  const shared: Message[] = [
    {
      id: 'm0',
      sender: 'user',
      role: 'user',
      parts: [{ type: 'text', text: 'please review' }],
      metadata: {},
      created_at: '2026-01-01T00:00:00.000Z',
    },
  ];
  const step = {
    sessionId: 'ses_a',
    runId: 'run_a',
    agent: 'desk',
    iteration: 0,
    now: '2026-01-01T00:00:00.000Z',
  };

  function team(
    select: Parameters<typeof defineCoordinator>[0]['select'],
    coordinator: Record<string, unknown> = {},
  ): TeamRuntime {
    const definition = defineCoordinator({ kind: 'mine', options: z.object({}).passthrough(), select });
    const kinds = teamKinds(
      [definition],
      [
        defineStopCondition({
          name: 'asked_review',
          options: z.boolean(),
          holds: (view, { options }) => options && view.lastText.includes('review'),
        }),
      ],
    );
    return {
      name: 'desk',
      description: '',
      prefix: '',
      members: [
        { agent: 'writer', role: 'draft' },
        { agent: 'reviewer', role: 'review' },
      ],
      coordinator: { kind: 'mine', ...coordinator },
      coordinatorDefinition: definition,
      stopConditions: kinds.stopConditions,
    };
  }
  const select = (runtime: TeamRuntime) =>
    coordinatorSelection({
      team: runtime,
      state: { turns: 0, cursors: [0, 0] },
      shared,
      readState: async () => null,
      step,
    });

  it('chooses members by name or index, and may ask a stop condition', async () => {
    expect(await select(team(() => ({ act: ['reviewer', 0] })))).toEqual({ kind: 'act', members: [1, 0] });
    const byCondition = team(
      async (_view, context) =>
        (await context.stopConditionHolds((context.options as { until: Record<string, unknown> }).until))
          ? { done: true }
          : { act: [0] },
      { until: { asked_review: true } },
    );
    expect(await select(byCondition)).toEqual({ kind: 'done' });
  });

  it('that names no member, a stranger, or throws fails with coordinator_invalid naming it', async () => {
    await expect(select(team(() => ({ act: [] })))).rejects.toThrow(
      'the coordinator "mine" of team "desk" chose no member (return {done: true} to finish)',
    );
    await expect(select(team(() => ({ act: ['critic'] })))).rejects.toThrow(
      'the coordinator "mine" of team "desk" chose "critic", not a member (members: writer, reviewer)',
    );
    await expect(
      select(
        team(() => {
          throw new Error('no keywords');
        }),
      ),
    ).rejects.toMatchObject({
      code: 'coordinator_invalid',
      message: 'the coordinator "mine" of team "desk" threw (no keywords)',
    });
    expect(await select(team(() => ({ fail: 'nobody fits' })))).toEqual({
      kind: 'failed',
      code: 'coordinator_invalid',
      message: 'nobody fits',
    });
  });
});
