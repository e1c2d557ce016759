import { type CliApi, connectApi } from './cli-client.js';
import { CliError } from './cli-error.js';
import type { ApiTarget } from './command-line.js';
import type { ProcessIo } from './process-io.js';
import { findInHistory, runHistoryPath } from './run-history.js';

/** Where `ratchet dev` and `ratchet api` listen unless the config says otherwise (api.port's default). */
export const defaultApiUrl = 'http://127.0.0.1:8080';

/**
 * The API a command about an existing run talks to: --url, else $RATCHET_URL, else the API this directory
 * started the run on (.ratchet/runs.jsonl), else the default `ratchet dev` address. The token: --token,
 * else $RATCHET_TOKEN.
 */
export function remoteApi(
  target: ApiTarget,
  io: ProcessIo,
  /** The run the command is about (its API is looked up in the history), or its history entry's url. */
  about: { runId?: string | undefined; url?: string | null } = {},
): CliApi {
  const remembered = about.url !== undefined ? (about.url ?? undefined) : rememberedUrl(about.runId);
  const url = target.url ?? fromEnv(io.env.RATCHET_URL) ?? remembered ?? defaultApiUrl;
  const token = target.token ?? io.env.RATCHET_TOKEN;
  return connectApi(url, token);
}

function fromEnv(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^https?:\/\/\S+$/.test(value)) {
    throw new CliError(`RATCHET_URL: must be an http:// or https:// URL (got "${value}")`, 2);
  }
  return value.replace(/\/+$/, '');
}

function rememberedUrl(runId: string | undefined): string | undefined {
  if (runId === undefined) return undefined;
  return findInHistory(runHistoryPath(), runId)?.url ?? undefined;
}
