import { lstatSync, readlinkSync } from 'node:fs';
import type { ToolsConfig } from '../../../config/index.js';

/** A program and its arguments, ready to spawn. */
export interface Invocation {
  command: string;
  args: readonly string[];
}

export interface SandboxOptions {
  /** The bubblewrap binary (found on the worker's PATH unless given). */
  bwrap: string;
  /** The workspace's real path: the one host directory the command may write. */
  workspace: string;
  /** The directory to start in (a real path inside the workspace). */
  cwd: string;
  settings: ToolsConfig['exec'];
  /** An inherited file descriptor the sandbox writes `ready` on once it is set up, just before the command. */
  readyFd: number;
}

/** What a sandboxed command finds on its PATH: only these are mounted, so a host PATH would mislead. */
const sandboxPath = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The pieces of /etc programs need to start (dynamic linker cache, `alternatives` links such as awk, the
 * time zone). Nothing else of /etc: no passwd, hosts, or configuration that names the host's secrets.
 */
const etcForPrograms = [
  '/etc/alternatives',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
];
/** What a program needs to reach the network by name and over TLS, mounted only with `network: true`. */
const etcForNetwork = [
  '/etc/resolv.conf',
  '/etc/hosts',
  '/etc/nsswitch.conf',
  '/etc/ssl',
  '/etc/ca-certificates',
];

/**
 * The bubblewrap command line that runs `inner` in a sandbox: a fresh mount namespace holding read-only
 * /usr (with the usual /bin, /lib ... links), the pieces of /etc above, a private /tmp, a minimal /dev, a /proc
 * of its own PID namespace (the worker and its environment are not visible), and the workspace read-write at
 * its own path. Every namespace is unshared (network too unless `network`), capabilities are dropped, the
 * environment is replaced, the command gets a new session (no terminal to inject input into) and dies with
 * the worker.
 */
export function sandboxInvocation(inner: Invocation, options: SandboxOptions): Invocation {
  const { settings } = options;
  const args = [
    '--ro-bind',
    '/usr',
    '/usr',
    ...systemDirectories(),
    ...etcForPrograms.flatMap((path) => ['--ro-bind-try', path, path]),
    ...(settings.network ? etcForNetwork.flatMap((path) => ['--ro-bind-try', path, path]) : []),
    ...settings.read_only_paths.flatMap((path) => ['--ro-bind', path, path]),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--bind',
    options.workspace,
    options.workspace,
    '--chdir',
    options.cwd,
    '--unshare-all',
    '--unshare-user',
    ...(settings.network ? ['--share-net'] : []),
    ...userMapping(),
    '--cap-drop',
    'ALL',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    ...Object.entries(sandboxEnv()).flatMap(([name, value]) => ['--setenv', name, value]),
    '--',
    // bubblewrap's own --info-fd is written before the mounts are made, so it cannot tell a failed setup from
    // a failing command; a word written from inside can. The descriptor is closed before the command starts.
    '/bin/sh',
    '-c',
    `printf ready >&${options.readyFd} && exec ${options.readyFd}>&- && exec "$@"`,
    'sh',
    inner.command,
    ...inner.args,
  ];
  return { command: options.bwrap, args };
}

/**
 * The environment bubblewrap itself starts with. Its own processes are visible inside the sandbox's /proc
 * (PID 1 is bubblewrap), so it must not inherit the worker's environment either.
 */
export function sandboxEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: sandboxPath, HOME: '/tmp', TMPDIR: '/tmp' };
  for (const name of ['LANG', 'LC_ALL', 'TZ']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

let systemDirectoryArgs: string[] | undefined;

/**
 * /bin, /sbin and /lib* as the host has them: links into /usr on a merged-/usr system, directories of their
 * own on older ones. Looked up once per process (the host's layout does not change under a worker).
 */
function systemDirectories(): string[] {
  systemDirectoryArgs ??= ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'].flatMap((path) => {
    try {
      const entry = lstatSync(path);
      if (entry.isSymbolicLink()) return ['--symlink', readlinkSync(path), path];
      if (entry.isDirectory()) return ['--ro-bind', path, path];
    } catch {
      // Not on this host.
    }
    return [];
  });
  return systemDirectoryArgs;
}

/** The sandbox runs as the worker's own user and group (bubblewrap maps them in a new user namespace). */
function userMapping(): string[] {
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  return [
    ...(uid === undefined ? [] : ['--uid', String(uid)]),
    ...(gid === undefined ? [] : ['--gid', String(gid)]),
  ];
}

/** The error result when bubblewrap cannot be started or cannot set the sandbox up. */
export function sandboxUnavailable(reason: string): Error {
  return new Error(
    `the command sandbox (tools.exec.sandbox: bwrap) is not available: ${reason}. Install bubblewrap ` +
      '(Debian/Ubuntu: apt-get install bubblewrap) and allow unprivileged user namespaces (in a container: ' +
      'a seccomp profile that permits them), or set tools.exec.sandbox: none to run commands unsandboxed (unsafe)',
  );
}
