import { readFile, stat } from 'node:fs/promises';
import { createContext, Script } from 'node:vm';
import { z } from 'zod';
import type { ToolsConfig } from '../../../config/index.js';
import { defineTool, type JsonValue } from '../../tool.js';
import { createToolBox, type ToolBox } from '../../toolbox.js';
import { type WalkedFile, walkWorkspace } from '../workspace/walk-workspace.js';
import { relativeInside, resolveInWorkspace, workspaceRoot } from '../workspace/workspace-path.js';
import { compileGlob, maxGlobLength } from './glob-pattern.js';

export interface SearchToolboxOptions {
  /** Absolute path of the workspace root. */
  workspace: string;
  settings: ToolsConfig['search'];
  /** Files larger than this are not searched by grep (tools.filesystem.max_read_bytes). */
  maxFileBytes: number;
}

/** A matched line is cut to this many characters in the result. */
const maxLineLength = 500;

const basePathField = z
  .string()
  .min(1)
  .optional()
  .describe('directory to search in, relative to the workspace root (default: the root)');

const globField = z
  .string()
  .min(1)
  .max(maxGlobLength, { error: `a glob may be at most ${maxGlobLength} characters long` });

/** `search`: find files by glob and lines by regular expression, inside the workspace. */
export function searchToolbox(options: SearchToolboxOptions): ToolBox {
  const { workspace, settings } = options;

  const globTool = defineTool({
    name: 'glob',
    description:
      'Lists the files whose path (relative to `path`) matches a glob: * ? [abc] {a,b} and ** for any ' +
      `number of directories, e.g. "**/*.ts" or "src/{lib,test}/*.js". At most ${settings.max_results} paths.`,
    inputSchema: z.strictObject({
      pattern: globField.describe('the glob'),
      path: basePathField,
    }),
    idempotent: true,
    handler: async (context, input) => {
      const matcher = compileGlob(input.pattern, 'pattern');
      const base = await searchBase(workspace, input.path);
      const paths: string[] = [];
      let truncated = false;
      const summary = await walkWorkspace(
        { realRoot: base.realRoot, start: base.start, signal: context.signal, maxFiles: settings.max_files },
        (file) => {
          if (!matcher.matches(relativeToBase(base, file))) return true;
          if (paths.length >= settings.max_results) {
            truncated = true;
            return false;
          }
          paths.push(file.relative);
          return true;
        },
      );
      return { paths, ...truncation(truncated, summary.stopped, settings) };
    },
  });

  const grepTool = defineTool({
    name: 'grep',
    description:
      'Searches the text files of the workspace for lines matching a regular expression (JavaScript syntax); ' +
      `returns path, line number and line, at most ${settings.max_results} matches.`,
    inputSchema: z.strictObject({
      pattern: z.string().min(1).describe('the regular expression'),
      path: basePathField.describe(
        'file or directory to search, relative to the workspace root (default: all)',
      ),
      include: globField.optional().describe('only files matching this glob, e.g. "**/*.ts"'),
      ignore_case: z.boolean().optional().describe('match regardless of case (default false)'),
    }),
    idempotent: true,
    handler: async (context, input) => {
      const regex = compileRegex(input.pattern, input.ignore_case === true);
      const matcher = lineMatcher(regex, input.pattern, Date.now() + settings.regex_timeout_ms);
      const include = input.include === undefined ? undefined : compileGlob(input.include, 'include');
      const base = await searchBase(workspace, input.path);
      const matches: { path: string; line: number; text: string }[] = [];
      let truncated = false;
      const searchFile = async (file: WalkedFile): Promise<boolean> => {
        if (include && !include.matches(relativeToBase(base, file))) return true;
        const lines = await textLines(file.absolute, options.maxFileBytes, context.signal);
        for (const index of matcher(lines)) {
          const line = lines[index] ?? '';
          if (matches.length >= settings.max_results) {
            truncated = true;
            return false;
          }
          matches.push({ path: file.relative, line: index + 1, text: line.slice(0, maxLineLength) });
        }
        return true;
      };
      if (base.file) {
        await searchFile(base.file);
        return { matches, ...truncation(truncated, false, settings) };
      }
      const summary = await walkWorkspace(
        { realRoot: base.realRoot, start: base.start, signal: context.signal, maxFiles: settings.max_files },
        searchFile,
      );
      return { matches, ...truncation(truncated, summary.stopped, settings) };
    },
  });

  return createToolBox('search', [globTool, grepTool]);
}

interface SearchBase {
  realRoot: string;
  /** The directory walked (the file's directory when `path` names a file). */
  start: string;
  /** Set when `path` names one file. */
  file?: WalkedFile;
}

async function searchBase(workspace: string, path: string | undefined): Promise<SearchBase> {
  const realRoot = await workspaceRoot(workspace);
  const target = await resolveInWorkspace(workspace, path ?? '.');
  if (!target.exists) throw new Error(`path: "${path}" does not exist`);
  if ((await stat(target.absolute)).isDirectory()) return { realRoot, start: target.absolute };
  return {
    realRoot,
    start: target.absolute,
    file: { relative: target.relative.split('\\').join('/'), absolute: target.absolute },
  };
}

function relativeToBase(base: SearchBase, file: WalkedFile): string {
  const relative = relativeInside(base.start, file.absolute);
  // A file reached through a symbolic link may live elsewhere in the workspace: match its shown path then.
  return relative === undefined ? file.relative : relative.split('\\').join('/');
}

function compileRegex(pattern: string, ignoreCase: boolean): RegExp {
  try {
    return new RegExp(pattern, ignoreCase ? 'iu' : 'u');
  } catch (error) {
    throw new Error(
      `pattern: not a valid regular expression (${(error as Error).message}); use JavaScript syntax and ` +
        'escape special characters such as ( [ { . * + ? with a backslash',
    );
  }
}

const matchScript = new Script(
  '(() => { const hits = []; for (let i = 0; i < lines.length; i += 1) if (regex.test(lines[i])) hits.push(i); return hits; })()',
);

/**
 * The indexes of the lines a file's lines the regex matches, all under one grep's deadline. Matching runs in
 * a vm script with a timeout, which V8 interrupts even inside a regex that backtracks catastrophically: the
 * worker's event loop is never blocked for longer than the deadline. One context per grep (making one costs
 * about a millisecond).
 */
function lineMatcher(
  regex: RegExp,
  pattern: string,
  deadline: number,
): (lines: readonly string[]) => number[] {
  const sandbox = createContext({ regex, lines: [] as readonly string[] });
  const tooSlow = () =>
    new Error(
      `pattern: matching "${pattern}" took too long (the regular expression may backtrack catastrophically, ` +
        'e.g. nested quantifiers like (a+)+); simplify it or narrow the search with path or include',
    );
  return (lines) => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw tooSlow();
    sandbox.lines = lines;
    try {
      return Array.from(matchScript.runInContext(sandbox, { timeout: remaining }) as ArrayLike<number>);
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw tooSlow();
      throw error;
    }
  };
}

/** The lines of a text file; none for a file too large to search or one that looks binary. */
async function textLines(path: string, maxBytes: number, signal: AbortSignal): Promise<string[]> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined || info.size > maxBytes) return [];
  const bytes = await readFile(path, { signal }).catch((error: unknown) => {
    if (signal.aborted) throw error;
    return undefined;
  });
  if (bytes === undefined || bytes.includes(0)) return [];
  return bytes.toString('utf8').split(/\r?\n/);
}

/** `stopped`: the walk ended early, by the results cap (then `truncated`) or by the files cap. */
function truncation(
  truncated: boolean,
  stopped: boolean,
  settings: ToolsConfig['search'],
): Record<string, JsonValue> {
  if (truncated)
    return { truncated: true, note: `stopped at ${settings.max_results} results; narrow the search` };
  if (stopped) {
    return {
      truncated: true,
      note: `stopped after looking at ${settings.max_files} files (tools.search.max_files); narrow the path`,
    };
  }
  return {};
}
