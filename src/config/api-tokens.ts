import type { ApiTokenEntry } from './config-schema.js';

/** An `api.tokens` entry read as one shape: its value, and its tenant (undefined: an operator token). */
export interface ApiToken {
  token: string;
  tenant: string | undefined;
}

export function apiTokens(entries: readonly ApiTokenEntry[]): ApiToken[] {
  return entries.map((entry) =>
    typeof entry === 'string'
      ? { token: entry, tenant: undefined }
      : { token: entry.token, tenant: entry.tenant },
  );
}

/** The values of `api.tokens`, scoped or not. */
export function apiTokenValues(entries: readonly ApiTokenEntry[]): string[] {
  return apiTokens(entries).map((entry) => entry.token);
}
