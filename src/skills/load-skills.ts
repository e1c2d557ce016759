import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseSkill, type Skill } from './skill.js';

export interface LoadedSkills {
  skills: Skill[];
  /** One line per file that could not be used: `<file>: what is wrong`. */
  problems: string[];
}

/**
 * Reads every `<dir>/<name>/SKILL.md`, in name order. A missing folder means no skills; a sub-folder
 * without SKILL.md, or a SKILL.md that does not parse, is a problem naming the file.
 */
export function loadSkills(dir: string): LoadedSkills {
  if (!existsSync(dir)) return { skills: [], problems: [] };
  const skills: Skill[] = [];
  const problems: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir).sort();
  } catch (error) {
    return { skills, problems: [`${dir}: cannot read the skills folder: ${(error as Error).message}`] };
  }
  for (const entry of entries) {
    if (entry.startsWith('.')) continue;
    const folder = join(dir, entry);
    if (!statSync(folder).isDirectory()) continue;
    const file = join(folder, 'SKILL.md');
    if (!existsSync(file)) {
      problems.push(`${folder}: a skill folder needs a SKILL.md`);
      continue;
    }
    try {
      skills.push(parseSkill(readFileSync(file, 'utf8'), entry, file));
    } catch (error) {
      problems.push(`${file}: ${(error as Error).message}`);
    }
  }
  return { skills, problems };
}
