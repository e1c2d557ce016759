import { describe, expect, it } from 'vitest';
import { syncForMember } from '../../src/workflows/core/team.js';
import { message } from '../models/chat-builder.js';

// Before a member's turn it is given what the others said since its last turn. Its own answers are in its
// chat already: given back, the model would read each of them twice, once as if someone else had said it.
describe('syncForMember', () => {
  const text = (value: string) => [{ type: 'text' as const, text: value }];
  const shared = [
    message('user', 'user', text('write about owls')),
    message('assistant', 'ping', text('ping 1')),
    message('assistant', 'pong', text('pong 1')),
    message('assistant', 'ping', text('ping 2')),
    message('assistant', 'pong', text('pong 2')),
  ];
  const idOf = (index: number) => `sync_${index}`;

  it("leaves out the member's own messages and starts at its cursor", () => {
    const synced = syncForMember(shared, 2, 'ping', idOf);
    expect(synced.map((entry) => [entry.sender, entry.parts])).toEqual([
      ['pong', text('pong 1')],
      ['pong', text('pong 2')],
    ]);
  });

  it('hands the others on as user messages, keeping sender, parts and metadata, with ids of their own', () => {
    const withMetadata = [{ ...shared[2], metadata: { turn: 1 } }] as typeof shared;
    const [synced] = syncForMember(withMetadata, 0, 'ping', idOf);
    expect(synced).toEqual({ ...withMetadata[0], role: 'user', id: 'sync_0' });
  });
});
