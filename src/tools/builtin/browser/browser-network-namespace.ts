import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { ToolsConfig } from '../../../config/index.js';
import type { Logger } from '../../../log/index.js';

/** What the pool launches: Chromium itself, or a script that starts it in a network namespace of its own. */
export interface ChromiumCommand {
  executablePath: string;
  /** Chromium has no network of its own (an empty network namespace). */
  isolated: boolean;
  /** Removes the script, if one was written. */
  cleanup(): Promise<void>;
}

/**
 * How Chromium is started (tools.browser.network_namespace). Chromium needs no network: the worker answers
 * every request of its pages and talks to it over a pipe. So where bubblewrap can make one, Chromium runs in
 * an empty network namespace (only a loopback of its own, which is down): nothing it does, whatever the
 * protocol (WebRTC's UDP, QUIC, mDNS, a request the interception missed), reaches a network, the worker's
 * loopback included. `auto` falls back to running Chromium directly when that cannot be set up (no bubblewrap,
 * no user namespaces), with a warning: its flags still keep WebRTC off UDP and its traffic on a dead proxy.
 * `required` refuses to start the browser then; `off` never tries.
 */
export async function chromiumCommand(options: {
  settings: ToolsConfig['browser'];
  chromium: string;
  logger: Logger;
  /** The bubblewrap binary; default `bwrap` from the worker's PATH (tests name a missing one). */
  bwrap?: string | undefined;
}): Promise<ChromiumCommand> {
  const { settings, chromium, logger } = options;
  const direct: ChromiumCommand = { executablePath: chromium, isolated: false, cleanup: async () => {} };
  const mode = settings.network_namespace;
  if (mode === 'off') return direct;
  const unavailable = (reason: string): ChromiumCommand => {
    if (mode === 'required') {
      throw new Error(
        `tools.browser.network_namespace is "required", but ${reason}: install bubblewrap (Debian: apt-get ` +
          'install bubblewrap) and allow unprivileged user namespaces, or set network_namespace to "auto"',
      );
    }
    logger.warn(
      `tools.browser: Chromium runs without a network namespace of its own (${reason}); WebRTC stays off UDP ` +
        'and its requests go through the worker, but other protocols are not cut off. Install bubblewrap ' +
        'and allow unprivileged user namespaces, or set tools.browser.network_namespace: off to silence this',
    );
    return direct;
  };
  const bwrap = options.bwrap === undefined ? onPath('bwrap') : executable(options.bwrap);
  if (bwrap === undefined) {
    return unavailable(`bubblewrap (${options.bwrap ?? 'bwrap'}) was not found on the worker's PATH`);
  }
  // Playwright starts one executable with Chromium's arguments: a script puts bubblewrap in front. It also
  // ends Chromium when the worker dies (--die-with-parent), as the pipe's close does.
  const directory = await mkdtemp(join(tmpdir(), 'ratchet-chromium-'));
  const script = join(directory, 'chromium');
  const cleanup = () => rm(directory, { recursive: true, force: true });
  try {
    await writeFile(
      script,
      `#!/bin/sh\nexec ${shellQuote(bwrap)} --dev-bind / / --unshare-net --die-with-parent -- ${shellQuote(
        chromium,
      )} "$@"\n`,
    );
    await chmod(script, 0o700);
    await probe(script);
  } catch (error) {
    await cleanup();
    return unavailable(`bubblewrap could not start Chromium in one: ${firstLine(error)}`);
  }
  return { executablePath: script, isolated: true, cleanup };
}

/** Starts Chromium through the script once (`--version`), so a namespace that cannot be made shows now. */
function probe(script: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(script, ['--version'], { timeout: 30_000 }, (error, _stdout, stderr) => {
      if (error) reject(new Error(stderr.trim() || error.message));
      else resolve();
    });
  });
}

function onPath(name: string): string | undefined {
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    const found = directory === '' ? undefined : executable(join(directory, name));
    if (found !== undefined) return found;
  }
  return undefined;
}

function executable(path: string): string | undefined {
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return undefined;
  }
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (text.split('\n').find((line) => line.trim() !== '') ?? text).slice(0, 300);
}
