import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { maxRememberedApprovals } from '../../src/workflows/index.js';
import { type ElicitSchema, ToolboxWorld } from './toolbox-world.js';

/**
 * Remembered approvals over MCP elicitation (decisions 0046, 0050): the approval form of
 * `ratchet mcp --toolboxes` offers `remember` ("tool", "arguments", a path prefix), kept for the MCP session
 * (the stdio connection, one process) and nowhere else. The client's person answers; the caller probes
 * the rule with calls it should not cover.
 */

let world: ToolboxWorld | undefined;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  await world?.close();
  world = undefined;
});

/** A client whose person answers each form with the next answer set, and which notes every form. */
async function asking(w: ToolboxWorld) {
  const forms: { message: string; schema: ElicitSchema }[] = [];
  let answer: Record<string, string> = { decision: 'reject' };
  const client = await w.connect(clients, {
    toolboxes: 'filesystem',
    requireApproval: 'edit_file',
    elicit: (message, schema): ElicitResult => {
      forms.push({ message, schema });
      return { action: 'accept', content: answer };
    },
  });
  return {
    client,
    forms,
    answer(next: Record<string, string>) {
      answer = next;
    },
  };
}

/** A call's result with the remembered approval that let it run without asking, if one did. */
async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
  const text = (result.content as { text?: string }[]).map((part) => part.text ?? '').join('');
  const approvedBy = (result._meta as Record<string, unknown> | undefined)?.['ratchet/approved_by'] as
    | { scope: string; path_prefix: string | null }
    | undefined;
  return { isError: result.isError === true, text, approvedBy };
}

describe('remembered approvals over MCP elicitation (stdio)', () => {
  it('offers remember; a remembered call is not asked again in that session; another call is', async () => {
    world = new ToolboxWorld();
    const file = (path: string) => join(world?.workspace ?? '', path);
    const person = await asking(world);
    const { client, forms } = person;

    // The form offers the scopes of decision 0046, "once" by default, and a field for the prefix.
    person.answer({ decision: 'approve', remember: 'arguments' });
    const first = await call(client, 'write_file', { path: 'a/x.txt', content: 'one' });
    expect(first.isError, first.text).toBe(false);
    expect(first.approvedBy).toBeUndefined();
    expect(forms).toHaveLength(1);
    expect(forms[0]?.schema.properties.remember).toMatchObject({
      enum: ['once', 'tool', 'arguments', 'path_prefix'],
      default: 'once',
    });
    expect(forms[0]?.schema.properties.path_prefix).toMatchObject({ type: 'string', maxLength: 1_000 });
    expect(forms[0]?.schema.required).toEqual(['decision']);

    // The same call (keys in another order: the same arguments) runs without asking.
    person.answer({ decision: 'reject' });
    const again = await call(client, 'write_file', { content: 'one', path: 'a/x.txt' });
    expect(again.isError, again.text).toBe(false);
    expect(again.approvedBy).toMatchObject({ scope: 'arguments' });
    expect(forms).toHaveLength(1);
    // Other arguments are asked (and refused by the answer now set).
    const other = await call(client, 'write_file', { path: 'a/x.txt', content: 'two' });
    expect(other.isError).toBe(true);
    expect(other.text).toContain('was not approved');
    expect(forms).toHaveLength(2);
    expect(readFileSync(file('a/x.txt'), 'utf8')).toBe('one');

    // A path prefix: calls inside it are not asked, however the path is written; a sibling folder with the
    // same start, a path that climbs out of it, and another tool are.
    person.answer({ decision: 'approve', remember: 'path_prefix', path_prefix: 'a/' });
    expect((await call(client, 'write_file', { path: 'a/y.txt', content: 'y' })).isError).toBe(false);
    expect(forms).toHaveLength(3);
    person.answer({ decision: 'reject', reason: 'outside a/' });
    for (const path of ['a/deep/z.txt', './a/../a/w.txt']) {
      const inside = await call(client, 'write_file', { path, content: path });
      expect(inside.isError, `${path}: ${inside.text}`).toBe(false);
      expect(inside.approvedBy, path).toMatchObject({ scope: 'path_prefix', path_prefix: '/a' });
    }
    // The rule compares paths as the workspace sees them; the toolbox's own confinement still applies to
    // what it approved: an absolute path is not a workspace path, whatever approved the call.
    const absolute = await call(client, 'write_file', { path: '/a/v.txt', content: 'v' });
    expect(absolute.approvedBy).toMatchObject({ scope: 'path_prefix' });
    expect(absolute.isError).toBe(true);
    expect(absolute.text).toContain('outside the workspace');
    expect(forms).toHaveLength(3);
    expect(readFileSync(file('a/deep/z.txt'), 'utf8')).toBe('a/deep/z.txt');
    for (const path of ['ab/x.txt', 'a/../b.txt', 'abc']) {
      const outside = await call(client, 'write_file', { path, content: 'no' });
      expect(outside.isError, path).toBe(true);
      expect(outside.text).toContain('was not approved: outside a/');
    }
    expect(forms).toHaveLength(6);
    expect(existsSync(file('ab/x.txt'))).toBe(false);
    expect(existsSync(file('b.txt'))).toBe(false);
    const edit = await call(client, 'edit_file', { path: 'a/x.txt', old_string: 'one', new_string: 'ONE' });
    expect(edit.isError).toBe(true);
    expect(forms).toHaveLength(7);
    expect(forms[6]?.message).toContain('edit_file');

    // "tool": every call of that tool, and of that tool only.
    person.answer({ decision: 'approve', remember: 'tool' });
    expect(
      (await call(client, 'edit_file', { path: 'a/x.txt', old_string: 'one', new_string: 'ONE' })).isError,
    ).toBe(false);
    expect(forms).toHaveLength(8);
    person.answer({ decision: 'reject' });
    const anyEdit = await call(client, 'edit_file', { path: 'a/y.txt', old_string: 'y', new_string: 'Y' });
    expect(anyEdit.isError, anyEdit.text).toBe(false);
    expect(anyEdit.approvedBy).toMatchObject({ scope: 'tool' });
    expect(readFileSync(file('a/y.txt'), 'utf8')).toBe('Y');
    expect((await call(client, 'write_file', { path: 'c.txt', content: 'c' })).isError).toBe(true);
    expect(forms).toHaveLength(9);

    // Another MCP session (another process of the same config) remembers nothing: it asks.
    const otherSession = await asking(world);
    otherSession.answer({ decision: 'reject' });
    const elsewhere = await call(otherSession.client, 'write_file', { path: 'a/x.txt', content: 'one' });
    expect(elsewhere.isError).toBe(true);
    expect(otherSession.forms).toHaveLength(1);
    const editElsewhere = await call(otherSession.client, 'edit_file', {
      path: 'a/y.txt',
      old_string: 'Y',
      new_string: 'y',
    });
    expect(editElsewhere.isError).toBe(true);
    expect(otherSession.forms).toHaveLength(2);
    expect(readFileSync(file('a/y.txt'), 'utf8')).toBe('Y');
  }, 240_000);

  it('refuses an approval whose remember cannot be kept, and asks again next time', async () => {
    world = new ToolboxWorld();
    const person = await asking(world);
    const { client, forms } = person;
    for (const [answer, expected] of [
      [{ decision: 'approve', remember: 'path_prefix' }, 'remember.path_prefix is empty'],
      [{ decision: 'approve', remember: 'path_prefix', path_prefix: 'a\0b' }, 'NUL'],
    ] as const) {
      person.answer(answer);
      const refused = await call(client, 'write_file', { path: 'a/x.txt', content: 'x' });
      expect(refused.isError, refused.text).toBe(true);
      expect(refused.text).toContain(expected);
      expect(refused.text).toContain('path_prefix');
    }
    // Answers that do not fit the form (checked against its schema): a scope not offered, a prefix over the
    // bound. The call is refused as a tool error, not run, and the server goes on.
    for (const [answer, expected] of [
      [{ decision: 'approve', remember: 'everything' }, 'remember'],
      [{ decision: 'approve', remember: 'path_prefix', path_prefix: 'p'.repeat(1_001) }, 'path_prefix'],
    ] as const) {
      person.answer(answer);
      const refused = await call(client, 'write_file', { path: 'a/x.txt', content: 'x' });
      expect(refused.isError, refused.text).toBe(true);
      expect(refused.text).toContain('the approval form was not answered as asked');
      expect(refused.text).toContain(expected);
    }
    expect(existsSync(join(world.workspace, 'a/x.txt'))).toBe(false);
    expect(forms).toHaveLength(4);
    // A rejection asks to remember nothing: the next call is asked.
    person.answer({ decision: 'reject', remember: 'tool' });
    expect((await call(client, 'write_file', { path: 'a/x.txt', content: 'x' })).isError).toBe(true);
    person.answer({ decision: 'approve' });
    expect((await call(client, 'write_file', { path: 'a/x.txt', content: 'x' })).isError).toBe(false);
    // "once" (the default, left out above) remembers nothing either.
    expect((await call(client, 'write_file', { path: 'a/x.txt', content: 'x' })).approvedBy).toBeUndefined();
    expect(forms).toHaveLength(7);

    // At most maxRememberedApprovals rules per session: the next one is refused (not run), saying how on.
    person.answer({ decision: 'approve', remember: 'arguments' });
    for (let index = 0; index < maxRememberedApprovals; index += 1) {
      const kept = await call(client, 'write_file', { path: 'n.txt', content: String(index) });
      expect(kept.isError, kept.text).toBe(false);
    }
    const over = await call(client, 'write_file', { path: 'n.txt', content: 'over' });
    expect(over.isError).toBe(true);
    expect(over.text).toContain(`remembers ${maxRememberedApprovals} approvals already`);
    expect(over.text).toContain('remember "once"');
    expect(readFileSync(join(world.workspace, 'n.txt'), 'utf8')).toBe(String(maxRememberedApprovals - 1));
    // The rules kept still answer, and approving once still works past the bound (it keeps no rule).
    expect((await call(client, 'write_file', { path: 'n.txt', content: '7' })).approvedBy).toBeDefined();
    person.answer({ decision: 'approve' });
    expect((await call(client, 'write_file', { path: 'n.txt', content: 'once' })).isError).toBe(false);
  }, 180_000);
});
