import { lstat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Why this exists: the filesystem tools let a model write any file of the workspace, and git reads some of
 * those files as its own configuration. A folder with `HEAD`, `config`, `objects/` and `refs/` is a bare
 * repository to git's discovery, and its `config` may name programs (filters, fsmonitor, pager, …) that a
 * later `git add` or `git status` runs. So every git command the tools run names its repository explicitly,
 * reads no configuration but the repository's own `.git/config` (which the filesystem tools refuse to
 * write), and switches off, from the command line, every setting that names a program. A model that runs
 * commands (the exec tools) can also create repositories inside the work tree, each with a configuration of
 * its own that no switch here can name: git is told never to enter them (ignoreSubmodules).
 */

/** Options given before the subcommand. */
export const gitGlobalOptions: readonly string[] = ['--no-pager', '--literal-pathspecs'];

/**
 * Given to every command that compares the work tree or shows changes. git then never looks into the work
 * tree of a submodule (or of a nested repository staged as one, or of one a `.git` file or link points to):
 * it starts no `git status` or `git diff` there, which would run with that repository's own configuration,
 * filters and attributes, out of reach of the switches below. It still shows which commit a gitlink records
 * and the nested repository's HEAD (read in-process, which runs nothing). Given on the command line, it also
 * overrides `submodule.<name>.ignore` in `.gitmodules`, a file a model writes.
 */
export const ignoreSubmodules = '--ignore-submodules=dirty';

/**
 * Settings every git command runs with, given as command-line configuration (GIT_CONFIG_COUNT), which
 * overrides the repository's. Each names a program, or makes git start one, in some command the tools run.
 */
const programSwitches: readonly (readonly [string, string])[] = [
  ['core.hooksPath', '/dev/null'],
  ['core.fsmonitor', 'false'],
  // "cat" and ":" are the values git itself treats as "no pager" and "no editor": nothing is started.
  ['core.pager', 'cat'],
  ['core.editor', ':'],
  ['sequence.editor', ':'],
  // An empty value is "none" for both (and empties the list of credential helpers).
  ['core.askPass', ''],
  ['credential.helper', ''],
  ['commit.gpgSign', 'false'],
  ['tag.gpgSign', 'false'],
  // git log would run gpg.program to check signatures.
  ['log.showSignature', 'false'],
  // No transport at all: ssh commands, proxies, `ext::` helpers and remote-side programs stay unused.
  ['protocol.allow', 'never'],
  // A commit may start `git maintenance run --auto` in the background, outliving the tool call.
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
  // Never enter a nested repository (see ignoreSubmodules), also in commands that take no such option
  // (git commit); no summaries or inline diffs of submodules, no recursion.
  ['status.submoduleSummary', 'false'],
  ['diff.ignoreSubmodules', 'dirty'],
  ['diff.submodule', 'short'],
  ['submodule.recurse', 'false'],
  ['fetch.recurseSubmodules', 'false'],
  ['safe.bareRepository', 'explicit'],
  ['core.attributesFile', '/dev/null'],
  ['core.quotePath', 'false'],
  ['color.ui', 'false'],
];

/** Keys of a filter driver that name a program; `<driver>` comes from `.gitattributes`, which a model writes. */
const filterProgramKeys = ['clean', 'smudge', 'process'] as const;

/** The environment git runs in, apart from the variables every child process gets. */
export interface GitEnvironmentOptions {
  /** The work dir's real path. */
  workDir: string;
  /** Names of keys in the repository's configuration (`git config --name-only --list`), when known. */
  configKeys?: readonly string[];
}

/**
 * Variables that pin the repository (GIT_DIR / GIT_WORK_TREE: no discovery, so no planted bare repository),
 * read no system or global configuration, and carry the program switches. Filter drivers configured in the
 * repository are switched off by name: `.gitattributes` may assign any of them to any file.
 */
export function gitEnvironment(options: GitEnvironmentOptions): NodeJS.ProcessEnv {
  const configKeys = options.configKeys ?? [];
  const filterDrivers = new Set(
    configKeys.flatMap((key) => {
      const driver = /^filter\.(.+)\.[^.]+$/s.exec(key)?.[1];
      return driver === undefined ? [] : [driver];
    }),
  );
  // protocol.allow=never is only the default: a protocol.<name>.allow of the repository would win over it.
  // Git reaches for a remote unasked in a partial clone (a missing object is fetched from the promisor
  // remote, through its configured upload-pack), so every protocol the repository allows is refused by name.
  const allowedProtocols = new Set(configKeys.filter((key) => /^protocol\..+\.allow$/s.test(key)));
  const settings: (readonly [string, string])[] = [
    ...programSwitches,
    ...[...filterDrivers].flatMap((driver) =>
      filterProgramKeys.map((key) => [`filter.${driver}.${key}`, ''] as const),
    ),
    ...[...allowedProtocols].map((key) => [key, 'never'] as const),
  ];
  const environment: NodeJS.ProcessEnv = {
    GIT_DIR: join(options.workDir, '.git'),
    GIT_WORK_TREE: options.workDir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    GIT_EDITOR: ':',
    GIT_SEQUENCE_EDITOR: ':',
    GIT_PROTOCOL_FROM_USER: '0',
    GIT_CONFIG_COUNT: String(settings.length),
  };
  for (const [index, [key, value]] of settings.entries()) {
    environment[`GIT_CONFIG_KEY_${index}`] = key;
    environment[`GIT_CONFIG_VALUE_${index}`] = value;
  }
  return environment;
}

/**
 * Refuses a work dir that is not the top of a non-bare repository: it must hold a real `.git` directory
 * (not a symbolic link, not a `gitdir:` file). Without this, git would take the work dir itself for a bare
 * repository when a model planted one there.
 */
export async function checkRepository(workDir: string, configuredWorkDir: string): Promise<void> {
  const gitDirectory = await lstat(join(workDir, '.git')).catch(() => undefined);
  if (gitDirectory?.isDirectory() === true) return;
  const found =
    gitDirectory === undefined
      ? 'it has no .git directory'
      : `its .git is a ${gitDirectory.isSymbolicLink() ? 'symbolic link' : 'file'}, not a directory`;
  throw new Error(
    `tools.git.work_dir "${configuredWorkDir}" must be the top directory of a git repository (${found}): ` +
      'run git init there. The git tools use no other repository (no enclosing one, no bare one).',
  );
}

/**
 * Refuses a repository whose configuration includes other files: git reads them at every command, they
 * cannot be switched off from the command line, and one of them could be a file a model wrote.
 * `configKeys` are read with `--no-includes`.
 */
export function checkConfigKeys(configKeys: readonly string[], configuredWorkDir: string): void {
  const include = configKeys.find((key) => /^include(if\..*)?\.path$/is.test(key));
  if (include !== undefined) {
    throw new Error(
      `tools.git.work_dir "${configuredWorkDir}": the repository's configuration sets ${include}, which makes ` +
        'git read another file at every command (a file a tool could write); remove it from .git/config ' +
        '(git config --unset-all <key>) to use the git tools here.',
    );
  }
  // Hooks defined in configuration (`hook.<name>.command`, newer git) are not reached by core.hooksPath, and
  // their names are the repository's to choose: refused rather than switched off one by one.
  const hook = configKeys.find((key) => /^hook\./is.test(key));
  if (hook !== undefined) {
    throw new Error(
      `tools.git.work_dir "${configuredWorkDir}": the repository's configuration sets ${hook}, a hook that ` +
        'git would run as a program; remove it from .git/config (git config --unset-all <key>) to use the ' +
        'git tools here.',
    );
  }
}
