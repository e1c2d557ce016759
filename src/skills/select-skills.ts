import { resolve } from 'node:path';
import { ConfigError, didYouMean, type RatchetConfig } from '../config/index.js';
import { loadSkills } from './load-skills.js';
import type { Skill } from './skill.js';

/**
 * The skills of each agent: those its `skills` list names, or every skill when the list is empty. Skills are
 * read from `skills.dir` (relative to the config's directory). Throws ConfigError listing every malformed
 * SKILL.md and every unknown skill name.
 */
export function selectAgentSkills(config: RatchetConfig, configDir: string): Map<string, Skill[]> {
  const dir = resolve(configDir, config.skills.dir);
  const { skills, problems } = loadSkills(dir);
  const byName = new Map(skills.map((skill) => [skill.name, skill]));
  const selected = new Map<string, Skill[]>();
  config.agents.forEach((agent, agentIndex) => {
    if (agent.skills.length === 0) {
      selected.set(agent.name, skills);
      return;
    }
    const own: Skill[] = [];
    agent.skills.forEach((name, skillIndex) => {
      const skill = byName.get(name);
      if (skill) own.push(skill);
      else
        problems.push(
          `agents[${agentIndex}].skills[${skillIndex}]: ${unknownSkill(name, [...byName.keys()], dir)}`,
        );
    });
    selected.set(agent.name, own);
  });
  if (problems.length > 0) throw new ConfigError(`skills (${dir})`, problems);
  return selected;
}

function unknownSkill(name: string, known: readonly string[], dir: string): string {
  const hint = didYouMean(name, known);
  if (hint !== '') return `unknown skill "${name}"${hint}`;
  if (known.length === 0) return `unknown skill "${name}" (no skills in ${dir}: add ${dir}/${name}/SKILL.md)`;
  return `unknown skill "${name}" (known skills: ${known.join(', ')})`;
}
