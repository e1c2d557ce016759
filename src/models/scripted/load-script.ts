import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { RatchetError } from '../../errors/index.js';
import { formatPath } from '../../schemas/index.js';
import { type Script, scriptSchema } from './script-schema.js';

/**
 * Validates a script from outside the code (a file, inline config, a test). Every problem is listed, one per
 * line, as `<source>: <path>: <message>`; the error is config_invalid.
 */
export function parseScript(value: unknown, source: string): Script {
  const parsed = scriptSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const path = issue.path.length === 0 ? '(root)' : formatPath(issue.path);
    return `${source}: ${path}: ${issue.message}`;
  });
  throw new RatchetError('config_invalid', problems.join('\n'), {
    cause: parsed.error,
    details: { source, problems },
  });
}

/** Reads a script file: `.json` as JSON, anything else as YAML. Synchronous: it runs once, at startup. */
export function loadScript(path: string): Script {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new RatchetError('config_invalid', `${path}: cannot read the script: ${(error as Error).message}`, {
      cause: error,
    });
  }
  let value: unknown;
  try {
    value = extname(path).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new RatchetError(
      'config_invalid',
      `${path}: not valid ${formatName(path)}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  return parseScript(value, path);
}

function formatName(path: string): string {
  return extname(path).toLowerCase() === '.json' ? 'JSON' : 'YAML';
}
