import { afterEach, describe, expect, inject, it } from 'vitest';
import { RatchetClient } from '../../src/client/index.js';
import { type CliWorld, createWorld, runCli, startServer } from './cli-fixture.js';

// `ratchet schedules` lists the API's schedules with their next fire, as a person reads them in a terminal.
let world: CliWorld | undefined;
let server: Awaited<ReturnType<typeof startServer>> | undefined;
afterEach(async () => {
  await server?.close();
  await world?.close();
  server = undefined;
  world = undefined;
});

describe('ratchet schedules', () => {
  it('lists each schedule with its timing, next fire (or paused) and agent', async () => {
    world = createWorld({ script: { replies: [{ text: 'ok' }] }, redisUrl: inject('redisUrl') });
    server = await startServer(world);
    const url = server.api.url;
    const empty = await runCli(['schedules', '--url', url], { cwd: world.dir });
    expect(empty.code).toBe(0);
    expect(empty.stdout).toBe(`no schedules on the API at ${url}\n`);

    const client = new RatchetClient({ baseUrl: url });
    const morning = await client.createSchedule({
      id: 'morning-report',
      cron: '0 7 * * 1-5',
      timezone: 'Europe/Paris',
      agent: 'helper',
      input: 'write the report',
    });
    await client.createSchedule({ id: 'hourly', every_s: 3600, agent: 'other', input: 'check' });
    await client.pauseSchedule('hourly');

    const listed = await runCli(['schedules', '--url', url], { cwd: world.dir });
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^SCHEDULE\s+WHEN\s+NEXT FIRE\s+AGENT\s+LAST RUN$/);
    expect(lines[1]).toMatch(/^hourly\s+every 3600 s\s+paused\s+other\s+-$/);
    const next = (morning.next_fire_at ?? '').replace(/\.\d+Z$/, 'Z');
    expect(lines[2]).toContain('morning-report');
    expect(lines[2]).toContain('0 7 * * 1-5 Europe/Paris');
    expect(lines[2]).toContain(next);
    expect(lines[2]).toContain('helper');
    expect(lines).toHaveLength(3);

    const help = await runCli(['schedules', '--help'], { cwd: world.dir });
    expect(help.stdout).toContain('schedules [--url URL] [--token T]');
  }, 120_000);
});
