import type { RecordFixture } from './record-fixtures.js';
import type { DumpedText } from './redis-dump.js';

/** One record found in a fixture: the kind it is (its `defineRecordKind` name), where it is, its JSON text. */
export interface FixtureRecord {
  kind: string;
  where: string;
  text: string;
}

const jobKinds: Readonly<Record<string, string>> = {
  iteration: 'job.iteration',
  tool: 'job.tool',
  'team-turn': 'job.team-turn',
};

/** The kind of a run journal's field, by the field's name (src/workflows/journal.ts), or undefined. */
function journalKind(field: string): string | undefined {
  if (field.startsWith('attempts:')) return 'journal.attempts';
  if (field.startsWith('failed:')) return 'journal.failed-attempt';
  if (/^reply:\d+$/.test(field)) return 'journal.reply';
  if (/^results:\d+$/.test(field)) return 'journal.results';
  if (/^tool:\d+:\d+:intent$/.test(field)) return 'journal.tool-intent';
  if (/^tool:\d+:\d+:outcome$/.test(field)) return 'journal.tool-outcome';
  if (/^team:\d+$/.test(field)) return 'journal.team-state';
  if (/^team-select:\d+$/.test(field)) return 'journal.team-selection';
  if (/^compact:\d+:\d+$/.test(field)) return 'journal.compaction';
  if (field === 'run-context') return 'journal.run-context';
  return undefined;
}

function text(value: DumpedText): string {
  return typeof value === 'string' ? value : Buffer.from(value.base64, 'base64').toString('utf8');
}

function versioned(value: string): boolean {
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'object' && parsed !== null && typeof (parsed as { v?: unknown }).v === 'number';
  } catch {
    return false;
  }
}

/**
 * The records of a fixture whose kind its key (and field) tells, and every other value that looks like a
 * versioned record (JSON with a numeric `v`) but has no known place: a new record a kind must be declared for.
 */
export function fixtureRecords(fixture: RecordFixture): { records: FixtureRecord[]; unplaced: string[] } {
  const records: FixtureRecord[] = [];
  const unplaced: string[] = [];
  const place = (kind: string | undefined, where: string, value: string) => {
    if (kind) records.push({ kind, where, text: value });
    else if (versioned(value)) unplaced.push(where);
  };
  for (const entry of fixture.keys) {
    const { key } = entry;
    switch (entry.type) {
      case 'hash': {
        const fields = new Map(entry.value.map(([field, value]) => [text(field), text(value)]));
        const jobKind = jobKinds[fields.get('name') ?? ''];
        for (const [field, value] of fields) {
          const where = `${key} ${field}`;
          if (/:(run|session):[^:]+$/.test(key) && field === 'record') {
            place(key.includes(':run:') ? 'run' : 'session', where, value);
          } else if (key.endsWith(':journal')) place(journalKind(field), where, value);
          else if (key.endsWith(':questions')) place('question', where, value);
          else if (key.endsWith(':tasks')) place('session.task', where, value);
          else if (key.endsWith(':notes')) place('session.note', where, value);
          else if (key.endsWith(':registry')) place('worker.registry-entry', where, value);
          else if (jobKind && field === 'data') place(jobKind, where, value);
          else place(undefined, where, value);
        }
        break;
      }
      case 'list':
        for (const [index, value] of entry.value.entries()) {
          place(/:chat:[^:]+$/.test(key) ? 'chat.entry' : undefined, `${key} [${index}]`, text(value));
        }
        break;
      case 'stream':
        for (const [id, fields] of entry.value.entries) {
          for (let index = 0; index + 1 < fields.length; index += 2) {
            const field = text(fields[index] as DumpedText);
            const kind =
              key.endsWith(':events') && key.includes(':session:') && field === 'event' ? 'event' : undefined;
            place(kind, `${key} ${id} ${field}`, text(fields[index + 1] as DumpedText));
          }
        }
        break;
      case 'string':
        place(/:chat:[^:]+:view$/.test(key) ? 'chat.context-view' : undefined, key, text(entry.value));
        break;
      default:
        break;
    }
  }
  return { records, unplaced };
}
