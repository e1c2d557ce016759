import { readFileSync, statSync } from 'node:fs';
import { ConfigError } from '../config/index.js';
import { validateAgainstContract } from '../workflows/index.js';
import { resolveConfigPath } from './cli-config.js';
import { CliError } from './cli-error.js';
import type { ProcessIo } from './process-io.js';

/** The largest file `contract check` reads (a result larger than a run's answer may be is refused anyway). */
export const maxCheckedFileBytes = 4 * 1024 * 1024;

/**
 * `ratchet contract check NAME FILE [--config F]`: checks FILE (a JSON value, or an answer with one ```json
 * block) against the config's contract NAME, for CI: exit 0 and `valid` when it holds, exit 1 with one line
 * per error naming its path in the value (`$.summary`), exit 2 when the check cannot be made (no such
 * contract or file, a config with problems). Rules written in code need the program that registers them
 * (`validateAgainstContract`): a config that names one does not load here.
 */
export async function contractCheckCommand(
  command: { contract: string; file: string; config: string | undefined },
  io: Pick<ProcessIo, 'stdout' | 'env'>,
): Promise<number> {
  const text = readCheckedFile(command.file);
  let checked: Awaited<ReturnType<typeof validateAgainstContract>>;
  try {
    checked = await validateAgainstContract(command.contract, text, {
      config: resolveConfigPath(command.config, io.env),
    });
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message, 2);
    throw error;
  }
  const version = checked.schema_version === null ? '' : ` (schema_version ${checked.schema_version})`;
  const lines = checked.valid
    ? [`${command.file}: valid against contract "${checked.contract}"${version}`]
    : [
        `${command.file}: breaks contract "${checked.contract}"${version}, ${checked.errors.length} error${checked.errors.length === 1 ? '' : 's'}:`,
        ...checked.errors.map((error) => `  ${error.path}: ${error.message} (${error.error_type})`),
      ];
  for (const warning of checked.warnings) lines.push(`  warning: ${warning}`);
  io.stdout.write(`${lines.join('\n')}\n`);
  return checked.valid ? 0 : 1;
}

function readCheckedFile(file: string): string {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (error) {
    throw new CliError(`ratchet contract check: cannot read ${file}: ${(error as Error).message}`, 2);
  }
  if (size > maxCheckedFileBytes) {
    throw new CliError(
      `ratchet contract check: ${file} is ${size} bytes, more than the ${maxCheckedFileBytes} this command reads`,
      2,
    );
  }
  return readFileSync(file, 'utf8');
}
