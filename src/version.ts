import { readFileSync } from 'node:fs';

let version: string | undefined;

/** The version in the package.json beside src/ (or dist/) of this build, read once. */
export function ratchetVersion(): string {
  version ??= (
    JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
  ).version;
  return version;
}
