import { z } from 'zod';
import { parseJsonRecord } from '../../../schemas/parse.js';
import { defineRecordKind } from '../../../schemas/record-kinds.js';
import type { ToolContext } from '../../tool.js';

/** The most URLs a run's record keeps (older ones drop off the start: back cannot go further). */
export const maxRecordedPages = 50;
/** A longer URL is not recorded (the page cannot be reopened from it). */
export const maxRecordedUrlChars = 8_192;

/**
 * What a run's browser shows, recorded in the session after every browser call that moved it: the pages
 * visited and which one is current. Another worker that takes the run over (a crash, the page closed for
 * idleness) reopens the current URL from it before acting (decision 0026).
 */
const pageRecordSchema = z.strictObject({
  v: z.literal(1),
  history: z.array(z.string().max(maxRecordedUrlChars)).max(maxRecordedPages),
  index: z.number().int().min(0),
});

export type PageRecord = z.infer<typeof pageRecordSchema>;

export const emptyPageRecord: PageRecord = { v: 1, history: [], index: 0 };

export async function readPageRecord(context: Pick<ToolContext, 'session' | 'runId'>): Promise<PageRecord> {
  const json = await context.session.data.readBrowserPage(context.runId);
  if (json === null) return emptyPageRecord;
  return parseJsonRecord(pageRecordSchema, json, `browser page record of run ${context.runId}`);
}

export async function writePageRecord(
  context: Pick<ToolContext, 'session' | 'runId'>,
  record: PageRecord,
): Promise<void> {
  await context.session.data.writeBrowserPage(context.runId, JSON.stringify(record));
}

/** The current URL of a record, if any. */
export function currentUrl(record: PageRecord): string | undefined {
  return record.history[record.index];
}

/** The record after the page moved to `url` by navigation (forward pages are dropped, as a browser does). */
export function visited(record: PageRecord, url: string): PageRecord {
  if (url.length > maxRecordedUrlChars || currentUrl(record) === url) return record;
  const history = [...record.history.slice(0, record.index + 1), url].slice(-maxRecordedPages);
  return { v: 1, history, index: history.length - 1 };
}

defineRecordKind({ name: 'browser.page', version: 1, schema: pageRecordSchema });
