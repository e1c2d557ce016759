import { z } from 'zod';
import { defineTool } from '../tools/index.js';
import { createToolBox, type ToolBox } from '../tools/toolbox.js';
import type { Skill } from './skill.js';

export const skillsToolboxName = 'skills';

/** The system prompt with the skills that have no description appended, each under its own heading. */
export function instructionsWithSkills(instructions: string, skills: readonly Skill[]): string {
  const inlined = skills.filter((skill) => skill.description === undefined);
  if (inlined.length === 0) return instructions;
  const sections = inlined.map((skill) => `## Skill: ${skill.name}\n\n${skill.body}`);
  return [instructions.trim(), ...sections].filter((part) => part !== '').join('\n\n');
}

/** `skills`: `load_skill`, offering the described skills of an agent; undefined when it has none. */
export function skillsToolbox(skills: readonly Skill[]): ToolBox | undefined {
  const offered = skills.filter((skill) => skill.description !== undefined);
  const [first, ...rest] = offered.map((skill) => skill.name);
  if (first === undefined) return undefined;
  const byName = new Map(offered.map((skill) => [skill.name, skill]));
  const loadSkill = defineTool({
    name: 'load_skill',
    description:
      'Loads the step-by-step procedure of a skill; follow it when a task matches. Skills:\n' +
      offered.map((skill) => `- ${skill.name}: ${skill.description}`).join('\n'),
    inputSchema: z.strictObject({ name: z.enum([first, ...rest]).describe('the skill to load') }),
    idempotent: true,
    handler: async (_context, input) => byName.get(input.name)?.body ?? '',
  });
  return createToolBox(skillsToolboxName, [loadSkill]);
}
