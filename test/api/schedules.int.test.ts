import { afterEach, describe, expect, it } from 'vitest';
import { RatchetApiError, RatchetClient } from '../../src/client/index.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { ApiHarness } from './api-harness.js';

// /v1/schedules over HTTP, through the typed client: create, list with the next fire, read with its fires,
// pause, resume, delete; and each refusal naming the field and the fix.
let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('/v1/schedules', () => {
  it('creates, lists with the next fire, shows fires and their runs, pauses, resumes and deletes', async () => {
    api = await ApiHarness.start({ script: { replies: [{ text: 'scheduled answer' }] } });
    const client = new RatchetClient({ baseUrl: api.url });
    const created = await client.createSchedule({
      id: 'every-second',
      every_s: 1,
      agent: 'agent',
      input: 'report',
      overlap: 'allow',
    });
    expect(created).toMatchObject({ id: 'every-second', paused: false, source: 'api', last_run_id: null });
    expect(created.spec).toMatchObject({ every_s: 1, timezone: 'UTC', overlap: 'allow', catch_up: 'none' });
    expect(Date.parse(created.next_fire_at ?? '')).toBeGreaterThan(Date.now() - 1_000);

    await waitFor(
      async () => (await client.schedule('every-second')).recent_fires.length >= 2,
      30_000,
      'two fires',
    );
    const view = await client.schedule('every-second');
    const fire = view.recent_fires.find((entry) => entry.outcome === 'run');
    expect(fire?.run_id).toMatch(/^run_/);
    const run = await client.get(fire?.run_id ?? '');
    expect(run.origin).toEqual({ kind: 'schedule', schedule: 'every-second', fire_at: fire?.fire_at });

    const paused = await client.pauseSchedule('every-second');
    expect(paused.paused).toBe(true);
    expect(paused.next_fire_at).toBeNull();
    const listed = await client.schedules();
    expect(listed.map((schedule) => [schedule.id, schedule.paused])).toEqual([['every-second', true]]);
    const resumed = await client.resumeSchedule('every-second');
    expect(resumed.paused).toBe(false);
    expect(resumed.next_fire_at).not.toBeNull();

    await client.deleteSchedule('every-second');
    expect(await client.schedules()).toEqual([]);
    const gone = await client.schedule('every-second').catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(RatchetApiError);
    expect((gone as RatchetApiError).status).toBe(404);
    expect((gone as RatchetApiError).details).toMatchObject({ resource: 'schedule' });
  }, 60_000);

  it('refuses what cannot be scheduled, naming the field and the fix', async () => {
    api = await ApiHarness.start({ script: { replies: [{ text: 'x' }] }, worker: false });
    const post = (body: unknown) => api?.request('POST', '/v1/schedules', { body });
    const base = { id: 'nightly', agent: 'agent', input: 'go' };

    const unknownAgent = await post({ ...base, every_s: 60, agent: 'nobody' });
    expect(unknownAgent?.status).toBe(404);
    expect(unknownAgent?.body.error.message).toContain('unknown agent "nobody"');

    const badCron = await post({ ...base, cron: 'every morning' });
    expect(badCron?.status).toBe(400);
    expect(badCron?.body.error.details.issues[0]).toMatchObject({ path: 'cron' });
    expect(badCron?.body.error.message).toContain('minute hour day month weekday');

    const badZone = await post({ ...base, cron: '0 7 * * *', timezone: 'Mars/Olympus' });
    expect(badZone?.status).toBe(400);
    expect(badZone?.body.error.details.issues[0]).toMatchObject({ path: 'timezone' });

    const both = await post({ ...base, cron: '0 7 * * *', every_s: 60 });
    expect(both?.status).toBe(400);
    expect(JSON.stringify(both?.body.error.details.issues)).toContain('exactly one of cron');

    const tooOften = await post({ ...base, every_s: 0 });
    expect(tooOften?.status).toBe(400);
    const tooLong = await post({ ...base, every_s: 60, input: 'x'.repeat(32_769) });
    expect(tooLong?.status).toBe(400);
    const badId = await post({ ...base, id: 'Has Spaces', every_s: 60 });
    expect(badId?.status).toBe(400);
    const unknownField = await post({ ...base, every_s: 60, when: 'now' });
    expect(unknownField?.status).toBe(400);

    expect((await post({ ...base, cron: '0 7 * * 1-5', timezone: 'Europe/Paris' }))?.status).toBe(201);
    const again = await post({ ...base, every_s: 60 });
    expect(again?.status).toBe(409);
    expect(again?.body.error.details).toMatchObject({ reason: 'schedule_exists' });

    for (const [method, path] of [
      ['GET', '/v1/schedules/missing'],
      ['DELETE', '/v1/schedules/missing'],
      ['POST', '/v1/schedules/missing/pause'],
      ['POST', '/v1/schedules/missing/resume'],
    ] as const) {
      const answer = await api?.request(method, path);
      expect(answer?.status, `${method} ${path}`).toBe(404);
    }
  }, 60_000);
});
