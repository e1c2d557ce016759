import './register-fake-provider.js';
import '../../src/models/index.js';
import { describe, expect, it } from 'vitest';
import { configParser } from './config-parser.js';

// The config's `schedules` (decision 0036): every entry checked at load, each problem at its path with the fix.
const { parse, problemsOf } = configParser();
const base = [
  'providers: [{ name: main, kind: fake, model: m }]',
  'agents: [{ name: writer, provider: main }, { name: checker, provider: main }]',
].join('\n');

const withSchedules = (entries: string) => `${base}\nschedules:\n${entries}`;

describe('config schedules', () => {
  it('takes cron and interval schedules, with the defaults filled in', () => {
    const config = parse(
      withSchedules(
        [
          '  - { id: morning-report, cron: "0 7 * * 1-5", timezone: Europe/Paris, agent: writer, input: report }',
          '  - { id: health, every_s: 300, agent: checker, input: check, tenant: acme, catch_up: once }',
        ].join('\n'),
      ),
    );
    expect(config.schedules).toEqual([
      {
        id: 'morning-report',
        cron: '0 7 * * 1-5',
        timezone: 'Europe/Paris',
        agent: 'writer',
        input: 'report',
        overlap: 'skip',
        catch_up: 'none',
        missed_after_s: 120,
      },
      {
        id: 'health',
        every_s: 300,
        timezone: 'UTC',
        agent: 'checker',
        input: 'check',
        tenant: 'acme',
        overlap: 'skip',
        catch_up: 'once',
        missed_after_s: 120,
      },
    ]);
    expect(parse(base).schedules).toEqual([]);
  });

  it('names each problem at its path, with the fix', () => {
    const problems = problemsOf(
      withSchedules(
        [
          '  - { id: a, cron: "every morning", agent: writer, input: x }',
          '  - { id: b, cron: "0 7 * * *", timezone: Mars/Olympus, agent: writer, input: x }',
          '  - { id: c, every_s: 60, agent: nobody, input: x }',
          '  - { id: a, every_s: 60, agent: writer, input: x }',
          '  - { id: d, agent: writer, input: x }',
          '  - { id: e, every_s: 60, cron: "* * * * *", agent: writer, input: x }',
          '  - { id: "Bad Id", every_s: 0, agent: writer, input: "", overlap: sometimes }',
        ].join('\n'),
      ),
    );
    const text = problems.join('\n');
    expect(text).toContain('schedules[0].cron: "every morning" is not a cron expression');
    expect(text).toContain('0 7 * * 1-5: 07:00 on weekdays');
    expect(text).toContain('schedules[1].timezone: "Mars/Olympus" is not an IANA time zone');
    expect(text).toMatch(/schedules\[2\]\.agent: .*nobody.*/);
    expect(text).toContain('schedules[3].id: duplicate schedule id "a" (also schedules[0])');
    expect(text).toContain('schedules[4].cron: give exactly one of cron');
    expect(text).toContain('schedules[5].every_s: give exactly one of cron');
    expect(text).toMatch(/schedules\[6\]\.id: must be 1 to 64 characters/);
    expect(text).toMatch(/schedules\[6\]\.every_s:/);
    expect(text).toMatch(/schedules\[6\]\.input:/);
    expect(text).toMatch(/schedules\[6\]\.overlap:/);
  });

  it('bounds what an entry holds', () => {
    const problems = problemsOf(
      withSchedules(
        [
          `  - { id: a, every_s: 31536001, agent: writer, input: x }`,
          `  - { id: b, every_s: 60, agent: writer, input: "${'x'.repeat(32_769)}" }`,
          `  - { id: c, every_s: 60, agent: writer, input: x, missed_after_s: 86401 }`,
          `  - { id: d, cron: "${'* '.repeat(70)}", agent: writer, input: x }`,
        ].join('\n'),
      ),
    );
    expect([...new Set(problems.map((problem) => problem.split(':')[0]))]).toEqual([
      'schedules[0].every_s',
      'schedules[1].input',
      'schedules[2].missed_after_s',
      'schedules[3].cron',
    ]);
  });
});
