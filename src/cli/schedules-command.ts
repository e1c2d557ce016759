import type { ScheduleView } from '../client/index.js';
import type { ApiTarget } from './command-line.js';
import type { ProcessIo } from './process-io.js';
import { remoteApi } from './remote-api.js';
import { printable } from './terminal.js';

/**
 * `ratchet schedules`: the API's schedules (GET /v1/schedules), one line each: id, when it fires, its next
 * fire (or `paused`), its agent, and the latest run a fire started.
 */
export async function schedulesCommand(options: ApiTarget, io: ProcessIo): Promise<number> {
  const { client, url } = remoteApi(options, io, { url: null });
  const out = (line: string) => io.stdout.write(`${line}\n`);
  const schedules = await client.schedules();
  if (schedules.length === 0) {
    out(`no schedules on the API at ${url}`);
    return 0;
  }
  out(header);
  for (const schedule of schedules) out(row(schedule));
  return 0;
}

const header = `${'SCHEDULE'.padEnd(20)}  ${'WHEN'.padEnd(24)}  ${'NEXT FIRE'.padEnd(20)}  ${'AGENT'.padEnd(16)}  LAST RUN`;

function row(schedule: ScheduleView): string {
  const { spec } = schedule;
  const when =
    spec.cron === undefined
      ? `every ${spec.every_s} s`
      : `${spec.cron}${spec.timezone === 'UTC' ? '' : ` ${spec.timezone}`}`;
  const next = schedule.paused ? 'paused' : (schedule.next_fire_at?.replace(/\.\d+Z$/, 'Z') ?? '-');
  return [
    printable(schedule.id).padEnd(20),
    printable(when).padEnd(24),
    next.padEnd(20),
    printable(spec.agent).padEnd(16),
    schedule.last_run_id ?? '-',
  ].join('  ');
}
