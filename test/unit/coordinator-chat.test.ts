import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/chat/index.js';
import { type CoordinatorDecision, coordinatorChat } from '../../src/workflows/core/coordinator-chat.js';

const said = (sender: string, text: string, turn?: number): Message => ({
  id: `${sender}-${text}`,
  sender,
  role: sender === 'user' ? 'user' : 'assistant',
  parts: [{ type: 'text', text }],
  metadata: turn === undefined ? {} : { turn },
  created_at: '2026-01-01T00:00:00.000Z',
});

const shared = [
  said('user', 'write about owls'),
  said('alpha', 'owls hunt', 1),
  said('beta', 'owls fly', 2),
  said('gamma', 'owls sleep', 2),
];
const decisions = new Map<number, CoordinatorDecision>([
  [1, { members: ['alpha'], done: false, reason: 'alpha knows owls' }],
  [2, { members: ['beta', 'gamma'], done: false }],
]);

function chat(window: number, turn = 3, given: readonly Message[] = shared) {
  return coordinatorChat({
    shared: given,
    decisions,
    turn,
    window,
    coordinator: 'board-coordinator',
    idOf: (suffix) => `r-t${turn}-${suffix}`,
    createdAt: '2026-01-01T00:00:00.000Z',
  }).map((message) => [
    message.role,
    message.parts.map((part) => (part.type === 'text' ? part.text : '')).join(''),
  ]);
}

describe("the llm coordinator's own chat", () => {
  it('holds what was new at each turn, then what it decided and why', () => {
    expect(chat(20)).toEqual([
      ['user', '[user] write about owls'],
      ['assistant', '{"members":["alpha"],"done":false,"reason":"alpha knows owls"}'],
      ['user', '[alpha] owls hunt'],
      ['assistant', '{"members":["beta","gamma"],"done":false}'],
      ['user', '[beta] owls fly\n\n[gamma] owls sleep'],
    ]);
  });

  it('shows only the latest `window` shared messages, and the decisions made on them', () => {
    expect(chat(2)).toEqual([
      [
        'user',
        '(2 earlier messages of the conversation are not shown)\n\n[beta] owls fly\n\n[gamma] owls sleep',
      ],
    ]);
    expect(chat(3)).toEqual([
      ['user', '(1 earlier messages of the conversation are not shown)\n\n[alpha] owls hunt'],
      ['assistant', '{"members":["beta","gamma"],"done":false}'],
      ['user', '[beta] owls fly\n\n[gamma] owls sleep'],
    ]);
  });

  it('is the same request however often it is built', () => {
    expect(chat(3)).toEqual(chat(3));
  });

  it('ignores a turn a message claims that lies ahead of the turn or behind an earlier one', () => {
    const forged = [said('user', 'start', 7), said('alpha', 'owls hunt', 1), said('beta', 'later', 0)];
    // A message cannot move itself past the current turn, nor before a turn already shown.
    expect(chat(20, 2, forged)).toEqual([['user', '[user] start\n\n[alpha] owls hunt\n\n[beta] later']]);
  });
});
