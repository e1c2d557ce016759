// Test ids: schedules-table, schedule-row (data-schedule-id, data-paused), schedule-next, schedule-runs,
// schedule-run (data-run-id), schedule-skip, schedule-toggle, schedules-empty.
import { useState } from 'preact/hooks';
import type { ScheduleView } from '../../client/index.js';
import { ErrorNote } from '../components/error-note.js';
import { TableHead } from '../components/table-head.js';
import { Text } from '../components/text.js';
import { usePoll } from '../components/use-poll.js';
import { formatTime } from '../format.js';
import type { PageProps } from '../page-props.js';
import { runHref } from '../router.js';

/** The latest fires a row shows. */
const firesShown = 5;

const columns = [
  { label: 'Schedule' },
  { label: 'When' },
  { label: 'Next fire' },
  { label: 'Agent' },
  { label: 'Latest fires' },
  { label: '' },
] as const;

/**
 * The schedules (GET /v1/schedules): each with when it fires, its next fire, its agent and its latest fires,
 * each a link to the run it started (or why it started none); a schedule is paused or resumed in place.
 */
export function SchedulesPage({ client }: PageProps) {
  const poll = usePoll((signal) => client.schedules({ signal }), [client]);
  const [actionError, setActionError] = useState<unknown>(undefined);
  const schedules = poll.data;
  const toggle = async (schedule: ScheduleView) => {
    try {
      setActionError(undefined);
      if (schedule.paused) await client.resumeSchedule(schedule.id);
      else await client.pauseSchedule(schedule.id);
      poll.refresh();
    } catch (error) {
      setActionError(error);
    }
  };
  return (
    <section aria-labelledby="schedules-heading">
      <h1 id="schedules-heading">Schedules</h1>
      <p class="page-intro">Runs started on a timetable: each fire starts one run, newest fires first.</p>
      <ErrorNote error={poll.error ?? actionError} />
      {schedules === undefined ? (
        poll.error === undefined && <p role="status">Loading…</p>
      ) : schedules.length === 0 ? (
        <p data-testid="schedules-empty">
          No schedules: add them under schedules in the config, or POST /v1/schedules.
        </p>
      ) : (
        <div class="table-scroll">
          <table data-testid="schedules-table">
            <caption class="visually-hidden">Schedules, their next fire and their latest runs</caption>
            <TableHead columns={columns} />
            <tbody>
              {schedules.map((schedule) => (
                <tr
                  key={schedule.id}
                  data-testid="schedule-row"
                  data-schedule-id={schedule.id}
                  data-paused={String(schedule.paused)}
                >
                  <th scope="row">
                    <Text value={schedule.id} />
                  </th>
                  <td>
                    <Text value={timing(schedule)} />
                  </td>
                  <td data-testid="schedule-next">
                    {schedule.paused ? (
                      <span class="muted">paused</span>
                    ) : (
                      <time dateTime={schedule.next_fire_at ?? ''}>{formatTime(schedule.next_fire_at)}</time>
                    )}
                  </td>
                  <td>
                    <Text value={schedule.spec.agent} />
                  </td>
                  <td>
                    <ul class="fire-list" data-testid="schedule-runs">
                      {schedule.recent_fires.slice(0, firesShown).map((fire) => (
                        <li key={fire.fire_at}>
                          <time dateTime={fire.fire_at}>{formatTime(fire.fire_at)}</time>{' '}
                          {fire.run_id !== null ? (
                            <a
                              href={runHref(fire.run_id)}
                              data-testid="schedule-run"
                              data-run-id={fire.run_id}
                            >
                              {fire.run_id}
                            </a>
                          ) : (
                            <span class="muted" data-testid="schedule-skip">
                              skipped ({fire.reason})
                            </span>
                          )}
                        </li>
                      ))}
                      {schedule.recent_fires.length === 0 && <li class="muted">no fire yet</li>}
                    </ul>
                  </td>
                  <td>
                    <button type="button" data-testid="schedule-toggle" onClick={() => void toggle(schedule)}>
                      {schedule.paused ? 'Resume' : 'Pause'}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function timing(schedule: ScheduleView): string {
  const { spec } = schedule;
  if (spec.cron === undefined) return `every ${spec.every_s} s`;
  return `${spec.cron} (${spec.timezone})`;
}
