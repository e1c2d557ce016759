import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { configErrorMap } from '../config/config-issues.js';
import { describeIssues } from '../schemas/index.js';

/** A procedure an agent can follow: `<skills dir>/<name>/SKILL.md`. */
export interface Skill {
  name: string;
  /** When set, the skill is offered through `load_skill`; without it, its body joins the system prompt. */
  description: string | undefined;
  /** The step-by-step procedure (the file after its front-matter). */
  body: string;
  /** Where it was read from, for messages. */
  file: string;
}

const skillNamePattern = /^[a-zA-Z][\w-]*$/;

const frontMatterSchema = z.strictObject({
  name: z.string().regex(skillNamePattern, {
    error: 'must start with a letter and contain only letters, digits, "_" and "-"',
  }),
  description: z.string().optional(),
});

/** Most characters of a SKILL.md: it goes into a model's context whole. */
export const maxSkillChars = 100_000;

const frontMatterPattern = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/;

/**
 * Parses a SKILL.md: a YAML front-matter block (`name`, optional `description`) between `---` lines, then
 * the body. Throws an Error whose message says what is wrong (the caller adds the file).
 */
export function parseSkill(text: string, folderName: string, file: string): Skill {
  if (text.length > maxSkillChars) {
    throw new Error(`is ${text.length} characters long; at most ${maxSkillChars} fit`);
  }
  const match = frontMatterPattern.exec(text);
  if (!match) {
    throw new Error(
      'must start with a front-matter block: a line "---", "name: …" and "description: …", a line "---"',
    );
  }
  let data: unknown;
  try {
    data = parseYaml(match[1] ?? '');
  } catch (error) {
    throw new Error(`front-matter is not valid YAML: ${(error as Error).message}`);
  }
  const parsed = frontMatterSchema.safeParse(data ?? {}, { error: configErrorMap });
  if (!parsed.success) throw new Error(`front-matter: ${describeIssues(parsed.error.issues)}`);
  if (parsed.data.name !== folderName) {
    throw new Error(`front-matter name "${parsed.data.name}" differs from its folder "${folderName}"`);
  }
  const body = (match[2] ?? '').trim();
  if (body === '') throw new Error('has no steps after its front-matter');
  const description = parsed.data.description?.trim();
  return { name: parsed.data.name, description: description ? description : undefined, body, file };
}
