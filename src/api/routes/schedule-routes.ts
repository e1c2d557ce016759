import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ScheduleState } from '../../engine/index.js';
import { RatchetError } from '../../errors/index.js';
import {
  createScheduleBodySchema,
  type ScheduleView,
  scheduleListSchema,
  scheduleParamsSchema,
  scheduleViewSchema,
} from '../../wire/index.js';
import type { ApiEngine } from '../api-engine.js';
import { errorResponses } from '../error-responses.js';

/** The fires a schedule's view shows. */
const shownFires = 20;

/** Schedules (decision 0036): create, list, read, delete, pause, resume. */
export const scheduleRoutes: FastifyPluginAsyncZod<{ engine: ApiEngine }> = async (app, { engine }) => {
  const viewOf = async (state: ScheduleState): Promise<ScheduleView> => {
    const fires = await engine.schedules().recentFires(state.record.spec.id, shownFires);
    return {
      id: state.record.spec.id,
      spec: state.record.spec,
      source: state.record.source,
      paused: state.record.paused,
      next_fire_at: state.nextFireAt ?? null,
      last_run_id: state.lastRunId ?? null,
      queued_fire_at: state.queuedFireAt ?? null,
      created_at: state.record.created_at,
      updated_at: state.record.updated_at,
      recent_fires: fires.map(({ fireAtMs, decision }) => ({
        fire_at: new Date(fireAtMs).toISOString(),
        outcome: decision.kind === 'run' ? 'run' : 'skip',
        run_id: decision.kind === 'run' ? decision.runId : null,
        reason: decision.kind === 'skip' ? decision.reason : null,
      })),
    };
  };
  const found = async (id: string): Promise<ScheduleState> => {
    const state = await engine.schedules().get(id);
    if (!state) throw new RatchetError('schedule_not_found', `unknown schedule ${id}`);
    return state;
  };

  app.post(
    '/schedules',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Create a schedule: a run of an agent on a cron expression or every N seconds',
        body: createScheduleBodySchema,
        response: { 201: scheduleViewSchema, ...errorResponses(400, 401, 403, 404, 409, 503) },
      },
    },
    async (request, reply) => {
      const state = await engine.schedules().create(request.body);
      return reply.code(201).send(await viewOf(state));
    },
  );

  app.get(
    '/schedules',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Every schedule, with its next fire',
        response: { 200: scheduleListSchema, ...errorResponses(401, 403, 503) },
      },
    },
    async () => ({ schedules: await Promise.all((await engine.schedules().list()).map(viewOf)) }),
  );

  app.get(
    '/schedules/:id',
    {
      schema: {
        tags: ['schedules'],
        summary: 'A schedule, its next fire and its latest fires',
        params: scheduleParamsSchema,
        response: { 200: scheduleViewSchema, ...errorResponses(401, 403, 404, 503) },
      },
    },
    async (request) => viewOf(await found(request.params.id)),
  );

  app.delete(
    '/schedules/:id',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Delete a schedule (the runs it started stay)',
        params: scheduleParamsSchema,
        response: { 204: z.null().describe('Deleted.'), ...errorResponses(401, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      await engine.schedules().remove(request.params.id);
      return reply.status(204).send(null);
    },
  );

  for (const action of ['pause', 'resume'] as const) {
    app.post(
      `/schedules/:id/${action}`,
      {
        schema: {
          tags: ['schedules'],
          summary:
            action === 'pause'
              ? 'Pause a schedule: its fires start nothing, and are not caught up'
              : 'Resume a paused schedule',
          params: scheduleParamsSchema,
          response: { 200: scheduleViewSchema, ...errorResponses(401, 403, 404, 503) },
        },
      },
      async (request) => viewOf(await engine.schedules().setPaused(request.params.id, action === 'pause')),
    );
  }
};
