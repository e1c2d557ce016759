export { instructionsWithSkills, skillsToolbox, skillsToolboxName } from './agent-skills.js';
export { type LoadedSkills, loadSkills } from './load-skills.js';
export { selectAgentSkills } from './select-skills.js';
export { maxSkillChars, parseSkill, type Skill } from './skill.js';
