import { z } from 'zod';
import { duration, integer, maxDayMs, withDefault } from '../schemas/index.js';
import { memorySchema, projectContextSchema } from './memory-config-schema.js';

/** Headers that describe what the client accepts or sends, never who it is: safe to send to another origin
 * (the default of `forward_headers_on_redirect`, and what the browser toolbox forwards). */
export const harmlessRequestHeaders: readonly string[] = [
  'accept',
  'accept-language',
  'content-language',
  'content-type',
  'user-agent',
];

/** A host name, an IP address (IPv6 without brackets), or `*.domain` for every subdomain of a domain. */
const hostPattern = /^(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$|^[0-9a-f:.]+$/i;
const hostSchema = z.string().regex(hostPattern, {
  error: 'must be a host name ("api.example.com"), an IP address, or "*.example.com"',
});
/** Hosts trusted with private addresses are named exactly: a pattern would trust names anyone can add. */
const exactHostSchema = z
  .string()
  .regex(hostPattern, { error: 'must be a host name or an IP address' })
  .refine((host) => !host.startsWith('*.'), { error: 'must name one host exactly (no "*." pattern)' });

/** Never sent to another origin, whatever the config says (the fetch standard drops them too). */
const credentialHeaders = ['authorization', 'cookie', 'proxy-authorization'];
const forwardableHeaderSchema = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9a-z-]+$/i, { error: 'must be an HTTP header name (e.g. accept-language)' })
  .transform((name) => name.toLowerCase())
  .refine((name) => !credentialHeaders.includes(name), {
    error: 'credentials are never forwarded to another origin: remove it from the list',
  });

const filesystemSchema = z.strictObject({
  /** Refuse write_file and edit_file. */
  read_only: withDefault(z.boolean(), false),
  /** The most read_file returns at once (a larger file is read in parts with offset/length). */
  max_read_bytes: withDefault(integer(1), 1_048_576),
  /** The most entries list_directory returns. */
  max_list_entries: withDefault(integer(1), 1_000),
});

const searchSchema = z.strictObject({
  /** The most paths (glob) or matching lines (grep) one search returns. */
  max_results: withDefault(integer(1), 200),
  /** The most files one search looks at, so a huge tree cannot keep a worker busy. */
  max_files: withDefault(integer(1), 20_000),
  /**
   * The longest one grep may spend matching. A pattern that backtracks catastrophically (`(a+)+$`) would
   * otherwise block the worker's event loop and stall every step it runs.
   */
  regex_timeout_ms: withDefault(integer(10, 60_000), 2_000),
});

const execSchema = z
  .strictObject({
    enabled: withDefault(z.boolean(), false),
    /** Program names (or exact paths) the model may run. */
    commands: withDefault(z.array(z.string().min(1)), []),
    timeout_ms: withDefault(duration(100, maxDayMs, '1 day'), 30_000),
    /** Cap of stdout and of stderr each; a process that writes more is killed. */
    max_output_bytes: withDefault(integer(1), 65_536),
    /** Run the command line through /bin/sh -c (only its first word is checked against `commands`). */
    shell: withDefault(z.boolean(), false),
    /**
     * `bwrap`: every command runs in a bubblewrap sandbox that sees only the workspace and read-only system
     * directories, never the worker's files, processes or environment. `none` runs it on the host as the
     * worker's user: unsafe, for hosts where the model is trusted.
     */
    sandbox: withDefault(z.enum(['bwrap', 'none']), 'bwrap'),
    /** Let sandboxed commands reach the network (off: the sandbox has its own, empty, network namespace). */
    network: withDefault(z.boolean(), false),
    /** More host directories or files the sandbox shows read-only (e.g. a toolchain under /opt). */
    read_only_paths: withDefault(
      z.array(
        z.string().refine((path) => path.startsWith('/') && !path.split('/').includes('..'), {
          error: 'must be an absolute path without ".." (e.g. /opt/toolchain)',
        }),
      ),
      [],
    ),
  })
  .refine((exec) => !exec.enabled || exec.commands.length > 0, {
    path: ['commands'],
    error: 'list at least one command when exec is enabled (e.g. commands: [ls, cat])',
  });

const gitSchema = z.strictObject({
  /** The top of the repository git tools work in, relative to the config file; default: the workspace. */
  work_dir: z.string().min(1).optional(),
  /** Commit author; default: GIT_AUTHOR_NAME / GIT_AUTHOR_EMAIL, else "Ratchet" / "ratchet@localhost". */
  author_name: z.string().min(1).optional(),
  author_email: z.string().min(1).optional(),
  timeout_ms: withDefault(duration(100, maxDayMs, '1 day'), 30_000),
  max_output_bytes: withDefault(integer(1), 262_144),
});

const httpSchema = z.strictObject({
  /** When not empty, the only hosts requests (and redirects) may go to. */
  allow_hosts: withDefault(z.array(hostSchema), []),
  /** Hosts that may resolve to loopback, private or link-local addresses (e.g. an internal service). */
  private_hosts: withDefault(z.array(exactHostSchema), []),
  /** Allow loopback, private and link-local addresses for every host. */
  allow_private: withDefault(z.boolean(), false),
  /** For the whole request, redirects included. */
  timeout_ms: withDefault(duration(100, maxDayMs, '1 day'), 15_000),
  /** The response body is cut at this size (and marked truncated). */
  max_response_bytes: withDefault(integer(1), 1_048_576),
  max_redirects: withDefault(integer(0, 20), 5),
  /**
   * The request headers still sent after a redirect to another origin (scheme, host and port); every other
   * header the model set is dropped there, since any of them may carry a credential (X-Api-Key ...).
   */
  forward_headers_on_redirect: withDefault(z.array(forwardableHeaderSchema), [...harmlessRequestHeaders]),
});

const browserSchema = z.strictObject({
  /** Run Chromium without a window (the only way on a server). */
  headless: withDefault(z.boolean(), true),
  /** The Chromium (or Chrome) binary; default: RATCHET_CHROMIUM, else `chromium` on PATH. Never downloaded. */
  executable_path: z.string().min(1).optional(),
  /** When not empty, the only hosts the page may load anything from (as tools.http.allow_hosts). */
  allow_hosts: withDefault(z.array(hostSchema), []),
  /** Hosts the page may load from although they resolve to loopback, private or link-local addresses. */
  private_hosts: withDefault(z.array(exactHostSchema), []),
  /** Let the page reach loopback, private and link-local addresses from every host. */
  allow_private: withDefault(z.boolean(), false),
  /**
   * The most pages one worker keeps open, one per run that uses the browser; past it the page used least
   * recently is closed (its run reopens it from its recorded URL when it comes back).
   */
  max_pages: withDefault(integer(1, 100), 4),
  /** The longest one action (a navigation, a click, a read, a screenshot) may take; a page that overruns is closed. */
  action_timeout_ms: withDefault(duration(100, 600_000, '10 minutes'), 15_000),
  /** The most characters browser_read returns (the rest is cut and marked truncated). */
  max_text_chars: withDefault(integer(1, 10_000_000), 50_000),
  /** The largest screenshot sent to the model (a larger PNG is sent as JPEG, and refused if still too large). */
  max_screenshot_bytes: withDefault(integer(1_000, 20_000_000), 1_048_576),
  /** The page's size in CSS pixels, which is also the size of every screenshot. */
  viewport_width: withDefault(integer(200, 4096), 1280),
  viewport_height: withDefault(integer(200, 4096), 800),
  /** The largest response the page may load (each document, script, image ...); a larger one is cut. */
  max_resource_bytes: withDefault(integer(1, 1_073_741_824), 10_485_760),
  /** Let pages download files (saved under the workspace's `downloads/`); off, every download is cancelled. */
  downloads: withDefault(z.boolean(), false),
  /** A run's page left unused this long is closed (it is reopened from its recorded URL when needed). */
  idle_close_ms: withDefault(duration(1_000, maxDayMs, '1 day'), 300_000),
  /**
   * The most requests one page has in flight at once (the rest wait their turn), and the most WebSockets it
   * keeps open.
   */
  max_requests_in_flight: withDefault(integer(1, 100), 8),
  /**
   * The most bytes of responses all pages of one worker hold at once: each body passes through the worker
   * whole, so this bounds the worker's memory for pages' loads (at most a few times this). At least
   * max_resource_bytes.
   */
  max_bytes_in_flight: withDefault(integer(1_048_576, 4_294_967_296), 33_554_432),
  /**
   * Run Chromium in a network namespace of its own (bubblewrap), so it reaches no network by itself: `auto`
   * when it can be made (else a warning), `required` (the browser refuses to start without), `off`.
   */
  network_namespace: withDefault(z.enum(['auto', 'required', 'off']), 'auto'),
});

/** The `tools:` section: settings of the built-in toolboxes. */
export const toolsConfigSchema = z.strictObject({
  /** Root of filesystem, search and exec, relative to the config file's directory. */
  workspace: withDefault(z.string().min(1), './workspace'),
  filesystem: withDefault(filesystemSchema, {}),
  search: withDefault(searchSchema, {}),
  exec: withDefault(execSchema, {}),
  git: withDefault(gitSchema, {}),
  http: withDefault(httpSchema, {}),
  memory: withDefault(memorySchema, {}),
  project_context: withDefault(projectContextSchema, {}),
  browser: withDefault(
    browserSchema.refine((browser) => browser.max_resource_bytes <= browser.max_bytes_in_flight, {
      path: ['max_bytes_in_flight'],
      error:
        'must be at least max_resource_bytes (a response of that size must fit): raise it or lower max_resource_bytes',
    }),
    {},
  ),
});

export type ToolsConfig = z.output<typeof toolsConfigSchema>;
