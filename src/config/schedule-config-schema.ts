import { CronExpressionParser } from 'cron-parser';
import type { z } from 'zod';
import { scheduleSpecSchema } from '../schemas/index.js';

/**
 * Why a schedule's cron expression or time zone cannot be used, or undefined when both can: the expression
 * is read by the parser BullMQ's job schedulers use, in the zone given, so what passes here fires there.
 */
export function scheduleTimingProblem(spec: {
  cron?: string | undefined;
  timezone: string;
}): { field: 'cron' | 'timezone'; message: string } | undefined {
  try {
    new Intl.DateTimeFormat('en', { timeZone: spec.timezone });
  } catch {
    return {
      field: 'timezone',
      message: `"${spec.timezone}" is not an IANA time zone: write one like UTC, Europe/Paris or America/New_York`,
    };
  }
  if (spec.cron === undefined) return undefined;
  try {
    CronExpressionParser.parse(spec.cron, { tz: spec.timezone }).next();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      field: 'cron',
      message:
        `"${spec.cron}" is not a cron expression (${reason}): write five fields, minute hour day month ` +
        'weekday (0 7 * * 1-5: 07:00 on weekdays), or six with seconds first',
    };
  }
  return undefined;
}

/** A schedule in the config (`schedules:`): the API's shape, its cron expression and time zone checked. */
export const scheduleConfigSchema = scheduleSpecSchema.superRefine((spec, context) => {
  const problem = scheduleTimingProblem(spec);
  if (problem) context.addIssue({ code: 'custom', path: [problem.field], message: problem.message });
});
export type ScheduleConfig = z.output<typeof scheduleConfigSchema>;
