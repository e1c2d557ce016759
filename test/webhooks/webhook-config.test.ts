import '../../src/models/index.js';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configSecrets, registerConfigSecrets } from '../../src/config/index.js';
import { webhookOutboxKinds } from '../../src/redis/webhook-outbox.js';
import { redactSecrets } from '../../src/secrets/index.js';
import { configParser } from '../config/config-parser.js';

const { parse, problemsOf } = configParser();
const secret = `whsec_${randomBytes(32).toString('base64')}`;

function configWith(webhooks: string): string {
  return [
    'providers: [{ name: main, kind: scripted, model: script, replies: [{ text: Done. }] }]',
    'agents: [{ name: assistant, provider: main }]',
    'webhooks:',
    webhooks,
  ].join('\n');
}

describe('the webhooks section', () => {
  it('takes an entry with defaults, its secret from the environment, and registers the secret', () => {
    const config = parse(
      configWith(
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's ${VAR} syntax
        '  - { url: "https://hooks.example.com/r", events: [run_completed, approval_requested], secret: "${HOOK_SECRET}" }',
      ),
      { env: { HOOK_SECRET: secret } },
    );
    expect(config.webhooks).toEqual([
      {
        url: 'https://hooks.example.com/r',
        events: ['run_completed', 'approval_requested'],
        secret,
        allow_private: false,
        retry_base_ms: 5_000,
        timeout_ms: 10_000,
        max_response_bytes: 4_096,
      },
    ]);
    expect(configSecrets(config, {})).toContain(secret);
    registerConfigSecrets(config);
    expect(redactSecrets(`signing with ${secret}`)).not.toContain(secret);
  });

  it('names the field and the fix for each bad entry', () => {
    const problems = problemsOf(
      configWith(
        [
          '  - { url: "ftp://x.example.com", events: [run_done], secret: "hunter2" }',
          '  - { id: "9bad", url: "https://u:p@x.example.com", events: [], secret: "whsec_c2hvcnQ=", retry_base_ms: 5 }',
          `  - { id: twice, url: "https://a.example.com", events: [ask_user, ask_user], secret: "${secret}", timeout_ms: 600000 }`,
        ].join('\n'),
      ),
    ).join('\n');
    expect(problems).toContain('webhooks[0].url');
    expect(problems).toContain('must use http or https, not ftp:');
    expect(problems).toContain('webhooks[0].events[0]');
    expect(problems).toContain('run_completed, run_failed, run_cancelled, ask_user, approval_requested');
    expect(problems).toContain('webhooks[0].secret');
    expect(problems).toContain('must be "whsec_" followed by base64');
    expect(problems).toContain('webhooks[1].id');
    expect(problems).toContain('webhooks[1].url');
    expect(problems).toContain('must not hold credentials');
    expect(problems).toContain('webhooks[1].events');
    expect(problems).toContain('must hold 24 to 64 bytes');
    expect(problems).toContain('webhooks[1].retry_base_ms');
    expect(problems).toContain('names an event twice');
    expect(problems).toContain('webhooks[2].timeout_ms');
  });

  it('refuses two webhooks with one id', () => {
    const problems = problemsOf(
      configWith(
        [
          `  - { id: twice, url: "https://a.example.com", events: [ask_user], secret: "${secret}" }`,
          `  - { id: twice, url: "https://b.example.com", events: [run_failed], secret: "${secret}" }`,
        ].join('\n'),
      ),
    ).join('\n');
    expect(problems).toContain('webhooks[1].id: "twice" is already the id of webhooks[0]');
  });

  it('writes to the outbox, in the commit scripts, exactly the kinds the dispatcher reads', () => {
    const lua = readFileSync(
      new URL('../../src/redis/lua/includes/webhook-outbox.lua', import.meta.url),
      'utf8',
    );
    const table = /local webhookOutboxKinds = \{([^}]*)\}/.exec(lua)?.[1] ?? '';
    const kinds = [...table.matchAll(/(\w+) = true/g)].map(([, kind]) => kind);
    expect(kinds.sort()).toEqual([...webhookOutboxKinds].sort());
  });
});
