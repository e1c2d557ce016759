import type { RatchetClient } from '../client/index.js';

/** What the shell gives every page: the API client (with the tab's token) and the route's parameters. */
export interface PageProps {
  client: RatchetClient;
  /** The id in the path (`id`) and the hash's query parameters. */
  params: Record<string, string>;
}
