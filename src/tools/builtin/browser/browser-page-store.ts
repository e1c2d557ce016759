/**
 * Where the browser toolbox records the page each run's browser shows (browser-page-record.ts), so a call
 * that lands on another worker reopens it: the record's JSON text by run id. The port the toolbox calls;
 * src/redis implements it.
 */
export interface BrowserPageStore {
  /** The JSON text of the page a run's browser shows, or null. */
  readBrowserPage(runId: string): Promise<string | null>;
  writeBrowserPage(runId: string, json: string): Promise<void>;
}
