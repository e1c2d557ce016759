import { z } from 'zod';
import { type CapabilityKind, capabilityKinds } from '../schemas/capabilities.js';

/** The service itself on the wire: health checks (/healthz, /readyz) and its state (GET /v1/system). */

export const healthSchema = z.strictObject({ status: z.literal('ok') });
export type Health = z.output<typeof healthSchema>;

export const readinessSchema = z.strictObject({
  status: z.literal('ready'),
  checks: z.strictObject({ redis: z.literal('ok'), config: z.literal('ok') }),
});

const isoTime = z.iso.datetime();
const queueCount = z.number().int().nonnegative();

export const systemStateSchema = z
  .strictObject({
    version: z.string(),
    config_hash: z.string(),
    admin_queues: z
      .string()
      .nullable()
      .describe(
        'Where the queue board (bull-board) is served, when api.admin_queues turns it on; else null.',
      ),
    workers: z.array(
      z.strictObject({
        id: z.string(),
        host: z.string().nullable(),
        pid: z.number().int(),
        concurrency: z.number().int().positive().nullable(),
        shards: z.array(z.number().int().nonnegative()).nullable(),
        started_at: isoTime,
        last_heartbeat_at: isoTime.nullable(),
        /** False: its heartbeat expired; its steps are being taken over. */
        alive: z.boolean(),
        capabilities: z
          .strictObject(
            Object.fromEntries(capabilityKinds.map((kind) => [kind, z.array(z.string())])) as {
              [Kind in CapabilityKind]: z.ZodArray<z.ZodString>;
            },
          )
          .nullable()
          .describe(
            'What the worker can serve, by kind: agents (and handoff groups, teams), providers, toolboxes, tools, effects, middleware, coordinators and stop conditions, MCP servers. A step needing a name its worker lacks goes back to the queue for a worker that has it (decision 0031). Null: a worker of a version that did not say.',
          ),
      }),
    ),
    queues: z.array(
      z.strictObject({
        shard: z.number().int().nonnegative(),
        counts: z.strictObject({
          waiting: queueCount,
          active: queueCount,
          delayed: queueCount,
          failed: queueCount,
          waiting_children: queueCount,
          prioritized: queueCount,
        }),
        parked: queueCount.describe(
          "Of the delayed jobs counted per kind, the steps parked on purpose: waiting for a person's answer, child runs, a state key or a rate limit, holding no worker (the others wait for a retry's backoff).",
        ),
        by_kind: z.record(
          z.string(),
          z.strictObject({
            waiting: queueCount.optional(),
            active: queueCount.optional(),
            delayed: queueCount.optional(),
            /** Of `delayed`, the parked ones (see `parked`). */
            parked: queueCount.optional(),
            failed: queueCount.optional(),
            /** In BullMQ's priority lane: the first steps of runs queued for admission (decision 0053). */
            prioritized: queueCount.optional(),
          }),
        ),
        by_kind_sampled: z.boolean(),
      }),
    ),
    /** Runs by status (waiting_input: with a pending question), from the run index. */
    runs_by_status: z.record(z.string(), queueCount),
  })
  .meta({ id: 'SystemState' });
/** GET /v1/system: workers, step queues, runs by status, version and config hash. */
export type SystemState = z.output<typeof systemStateSchema>;
