// Contracts as a library: a rule kind written in code (a ticket id that must name a known project), a
// built-in template, and validateAgainstContract checking values outside any run, as a CI step or a test
// would. Run it with `npx tsx examples/contract-check.ts`; it needs no Redis and no model.
import { z } from 'zod';
import { defineContractRule, parseConfigText, validateAgainstContract } from '../src/index.js';

/** `{kind: ticket_id, field, params: {projects}}`: the field is `<PROJECT>-<number>` of a known project. */
export const ticketId = defineContractRule({
  kind: 'ticket_id',
  options: z.strictObject({ projects: z.array(z.string()).min(1) }),
  check({ value, options }) {
    const match = typeof value === 'string' ? /^([A-Z]+)-[0-9]+$/.exec(value) : null;
    if (!match) return 'expected a ticket id such as OPS-12';
    return options.projects.includes(match[1] ?? '')
      ? undefined
      : `unknown project ${match[1]}: expected one of ${options.projects.join(', ')}`;
  },
});

const extensions = { contractRules: [ticketId] };
const loaded = parseConfigText(
  `
providers: [{ name: main, kind: scripted, model: demo, replies: [{ text: "{}" }] }]
agents: [{ name: triage, provider: main }, { name: lead, provider: main }]
contracts:
  - name: triage-report
    from_agent: triage
    to_agent: lead
    template: analysis_result
    schema_version: "2.0"
    schema:
      required: { ticket: string }
      rules:
        - { kind: ticket_id, field: ticket, params: { projects: [OPS, WEB] } }
`,
  { env: {}, configDir: '.', extensions },
);

export const good = await validateAgainstContract(
  'triage-report',
  { summary: 'The login page times out.', findings: ['slow DNS'], confidence: 0.8, ticket: 'OPS-12' },
  { config: loaded, extensions },
);
export const bad = await validateAgainstContract(
  'triage-report',
  { summary: '', findings: [], confidence: 1.4, ticket: 'HR-3' },
  { config: loaded, extensions },
);
console.log(good.valid, good.schema_version); // true 2.0
for (const error of bad.errors) console.log(`${error.path}: ${error.message}`);
// $.summary: length 0 is below the minimum of 1
// $.confidence: 1.4 is outside 0..1
// $.ticket: unknown project HR: expected one of OPS, WEB
