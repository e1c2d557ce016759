import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import dotenv from 'dotenv';
import { type Document, isNode, LineCounter, parseDocument } from 'yaml';
import { checkReferences, type KnownToolbox } from './check-references.js';
import { ConfigError } from './config-error.js';
import { type ConfigExtensions, parsingWith } from './config-extensions.js';
import { configErrorMap, formatProblem, issuesToProblems, isUnknownKeyProblem } from './config-issues.js';
import { configSchema, type RatchetConfig } from './config-schema.js';
import { registerConfigSecrets } from './config-secrets.js';
import { rememberEnvReferences } from './env-references.js';
import { expandEnv } from './expand-env.js';

export interface LoadedConfig {
  config: RatchetConfig;
  /** Absolute path of the file, or the source name of text given to parseConfigText. */
  path: string;
  /** Relative paths in provider fields resolve against this directory. */
  configDir: string;
  /** The kinds registered in code the config was checked against (effects, coordinators, stop conditions). */
  extensions?: ConfigExtensions | undefined;
}

export interface LoadConfigOptions {
  /** The real environment; defaults to process.env. It wins over .env files. */
  env?: NodeJS.ProcessEnv;
  /** Where to look for the second .env file; defaults to process.cwd(). */
  cwd?: string;
  /** The toolboxes that exist (names, or toolboxes with their tools); when given, agents may only use these. */
  knownToolboxes?: readonly KnownToolbox[];
  /**
   * Effects, coordinators and stop conditions registered in code (an `Extensions`): the config may name
   * their kinds, and their options are checked by their schemas. Without them only the built-ins exist.
   */
  extensions?: ConfigExtensions;
}

export interface ParseConfigOptions {
  /** The complete environment used for `${VAR}` expansion and the REDIS_URL default. */
  env: NodeJS.ProcessEnv;
  configDir: string;
  knownToolboxes?: readonly KnownToolbox[];
  /** Kinds registered in code (see LoadConfigOptions.extensions). */
  extensions?: ConfigExtensions;
  /** Names the text in error messages; defaults to "<config>". */
  sourceName?: string;
}

/**
 * Reads, expands, parses and validates a config file. Variables come from the environment, then a `.env`
 * next to the file, then a `.env` in the working directory (the first to define a name wins); process.env
 * is never modified. Throws ConfigError listing every problem found. The config's secrets are registered,
 * so this process hides them by value from every log line, recorded error, event and tool result.
 */
export function loadConfig(path: string, options: LoadConfigOptions = {}): LoadedConfig {
  const absolutePath = resolve(path);
  const configDir = dirname(absolutePath);
  const text = readText(absolutePath, path);
  const env = layeredEnv(options.env ?? process.env, [configDir, options.cwd ?? process.cwd()], path);
  const loaded = parseConfigText(text, {
    env,
    configDir,
    knownToolboxes: options.knownToolboxes,
    sourceName: path,
    ...(options.extensions ? { extensions: options.extensions } : {}),
  });
  return { ...loaded, path: absolutePath };
}

/**
 * Expands, parses and validates config text: loadConfig without the files. Throws ConfigError listing every
 * problem: an unset variable hides none of the others, and what follows from its empty value is left out.
 * Like loadConfig, registers the config's secrets and the secret-named values of `env` for redaction.
 */
export function parseConfigText(text: string, options: ParseConfigOptions): LoadedConfig {
  const sourceName = options.sourceName ?? '<config>';
  const expanded = expandEnv(text, options.env);
  const badReferences = expanded.problems.map((problem) => problem.expandedOffset);
  const followsFromBadReference = (start: number, end: number) =>
    badReferences.some((offset) => offset >= start && offset <= end);
  const expansionProblems = expanded.problems.map((problem) => ({
    offset: problem.expandedOffset,
    text: `line ${problem.line}: ${problem.message}`,
  }));

  const lineCounter = new LineCounter();
  const document = parseDocument(expanded.text, { lineCounter, prettyErrors: false });
  if (document.errors.length > 0) {
    const syntaxProblems = document.errors
      .filter((error) => !followsFromBadReference(error.pos[0], error.pos[1]))
      .map((error) => {
        const { line, col } = lineCounter.linePos(error.pos[0]);
        return { offset: error.pos[0], text: `line ${line}, column ${col}: ${error.message}` };
      });
    throw configError(sourceName, [...expansionProblems, ...syntaxProblems]);
  }
  let data: unknown;
  try {
    data = document.toJS();
  } catch (error) {
    // Only alias abuse gets here (an alias expanding too often); syntax errors were reported above.
    const aliasProblem = { offset: 0, text: `(root): ${(error as Error).message}` };
    throw configError(sourceName, [...expansionProblems, aliasProblem], error);
  }
  const raw = withRedisUrlFromEnv(data, options.env);

  const parsed = parsingWith(options.extensions, () =>
    configSchema.safeParse(raw, { error: configErrorMap }),
  );
  const problems = [
    ...(parsed.success ? [] : issuesToProblems(parsed.error.issues, configSchema)),
    ...checkReferences(raw, { knownToolboxes: options.knownToolboxes }),
  ];
  if (!parsed.success || problems.length > 0 || expansionProblems.length > 0) {
    const checkProblems = problems
      .filter((problem) => {
        // A value a bad reference emptied, or cut: its problem is that reference's. A key is never.
        if (isUnknownKeyProblem(problem)) return true;
        const node: unknown = document.getIn(problem.path, true);
        return !(isNode(node) && node.range && followsFromBadReference(node.range[0], node.range[1]));
      })
      .map((problem) => ({ offset: offsetOf(document, problem.path), text: formatProblem(problem) }));
    throw configError(sourceName, [...expansionProblems, ...checkProblems]);
  }
  registerConfigSecrets(parsed.data, options.env);
  rememberEnvReferences(parsed.data, text, options.env);
  return {
    config: parsed.data,
    path: sourceName,
    configDir: options.configDir,
    ...(options.extensions ? { extensions: options.extensions } : {}),
  };
}

/** A problem as shown, with where it is in the (expanded) text: 0 for the document as a whole. */
interface PlacedProblem {
  offset: number;
  text: string;
}

/** The ConfigError of these problems, in the order of the file (those at one place keep their order). */
function configError(sourceName: string, problems: readonly PlacedProblem[], cause?: unknown): ConfigError {
  const ordered = [...problems].sort((a, b) => a.offset - b.offset);
  return new ConfigError(
    sourceName,
    ordered.map((problem) => problem.text),
    cause === undefined ? {} : { cause },
  );
}

/** Where the node at `path` starts, or its nearest existing ancestor (a missing key is its parent's). */
function offsetOf(document: Document, path: readonly PropertyKey[]): number {
  for (let length = path.length; length > 0; length--) {
    const node: unknown = document.getIn(path.slice(0, length), true);
    if (isNode(node) && node.range) return node.range[0];
  }
  return 0;
}

function readText(absolutePath: string, shownPath: string): string {
  try {
    return readFileSync(absolutePath, 'utf8');
  } catch (error) {
    throw new ConfigError(shownPath, [`cannot read the file: ${(error as Error).message}`], { cause: error });
  }
}

/** The environment over the .env files of `directories`, earlier directories winning over later ones. */
function layeredEnv(
  env: NodeJS.ProcessEnv,
  directories: readonly string[],
  shownPath: string,
): NodeJS.ProcessEnv {
  const layers: NodeJS.ProcessEnv[] = [];
  for (const directory of new Set(directories.map((entry) => resolve(entry)))) {
    const dotenvPath = join(directory, '.env');
    if (!existsSync(dotenvPath)) continue;
    try {
      layers.push(dotenv.parse(readFileSync(dotenvPath, 'utf8')));
    } catch (error) {
      throw new ConfigError(shownPath, [`cannot read ${dotenvPath}: ${(error as Error).message}`], {
        cause: error,
      });
    }
  }
  const merged: NodeJS.ProcessEnv = {};
  for (const layer of [...layers.reverse(), env]) {
    for (const [name, value] of Object.entries(layer)) {
      if (value !== undefined) merged[name] = value;
    }
  }
  return merged;
}

/**
 * redis.url defaults to REDIS_URL, and redis.cluster_nodes to REDIS_CLUSTER_NODES (comma-separated), when the
 * file leaves them out (the schema's own defaults come after).
 */
function withRedisUrlFromEnv(raw: unknown, env: NodeJS.ProcessEnv): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
  const root = raw as Record<string, unknown>;
  const redis = root.redis ?? {};
  if (typeof redis !== 'object' || Array.isArray(redis)) return raw;
  const section = { ...(redis as Record<string, unknown>) };
  const missing = (key: string) => section[key] === undefined || section[key] === null;
  if (env.REDIS_URL && missing('url')) section.url = env.REDIS_URL;
  const nodes = env.REDIS_CLUSTER_NODES?.split(',')
    .map((node) => node.trim())
    .filter((node) => node !== '');
  if (nodes && nodes.length > 0 && missing('cluster_nodes')) section.cluster_nodes = nodes;
  return withWorkspaceFromEnv({ ...root, redis: section }, env);
}

/**
 * `tools.workspace` from RATCHET_WORKSPACE when the file sets none: the container image points it at a
 * directory its user owns, since the default (`./workspace` beside the config file) would sit under the
 * read-only config mount.
 */
function withWorkspaceFromEnv(
  root: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): Record<string, unknown> {
  const workspace = env.RATCHET_WORKSPACE;
  if (!workspace) return root;
  const tools = root.tools ?? {};
  if (typeof tools !== 'object' || Array.isArray(tools)) return root;
  const section = tools as Record<string, unknown>;
  if (section.workspace !== undefined && section.workspace !== null) return root;
  return { ...root, tools: { ...section, workspace } };
}
