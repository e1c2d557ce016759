import { constants, copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { packageRoot } from './cli-config.js';
import type { ProcessIo } from './process-io.js';

/** The starter project the package ships (`templates/starter`); `dot-ratchet/` is written as `.ratchet/`. */
export const starterTemplateDir = resolve(packageRoot, 'templates/starter');

/** A template path as it is written into the project (`dot-ratchet/skills/x` → `.ratchet/skills/x`). */
function targetPath(templatePath: string): string {
  return templatePath.replace(/^dot-ratchet(?=\/|$)/, '.ratchet');
}

/** Every file of a folder, as paths relative to it, in name order. */
function filesOf(dir: string, under = ''): string[] {
  return readdirSync(join(dir, under), { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const path = under === '' ? entry.name : `${under}/${entry.name}`;
      return entry.isDirectory() ? filesOf(dir, path) : [path];
    });
}

/**
 * `ratchet init [DIR]`: writes the starter project into DIR (default: here): a dev-team config, a skill per
 * role, the project's context file and a README. Writes nothing when any of its files exists (naming them),
 * and never overwrites one (each file is created exclusively). Exit 0, or 1 when files are in the way.
 */
export function initCommand(
  dir: string | undefined,
  io: Pick<ProcessIo, 'stdout' | 'stderr' | 'invocation'>,
  cwd = process.cwd(),
): number {
  const target = resolve(cwd, dir ?? '.');
  const files = filesOf(starterTemplateDir).map((path) => ({ from: path, to: targetPath(path) }));
  const existing = files.filter((file) => existsSync(join(target, file.to))).map((file) => file.to);
  if (existing.length > 0) {
    io.stderr.write(
      `ratchet init: ${existing.join(', ')} ${existing.length === 1 ? 'exists' : 'exist'} already in ${target}; ` +
        `nothing was written (move them away, or give another directory: ${io.invocation} init DIR)\n`,
    );
    return 1;
  }
  for (const file of files) {
    const destination = join(target, file.to);
    mkdirSync(resolve(destination, '..'), { recursive: true });
    // COPYFILE_EXCL: a file that appeared since the check above is not overwritten (the copy fails).
    copyFileSync(join(starterTemplateDir, file.from), destination, constants.COPYFILE_EXCL);
  }
  const shown = relative(cwd, target) || '.';
  io.stdout.write(
    `Wrote a starter dev team into ${shown}:\n${files.map((file) => `  ${file.to}`).join('\n')}\n\n` +
      `Next: ${shown === '.' ? '' : `cd ${shown} && `}${io.invocation} run --config ratchet.yaml "Add a greeting to hello.txt"\n` +
      '(scripted models, no API key needed; README.md says how to use a real one)\n',
  );
  return 0;
}
