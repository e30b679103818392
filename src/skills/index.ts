export { loadSkills } from './load.ts';
export { COLLISION_THRESHOLD, descriptionSimilarity } from './similarity.ts';
export { skillIndex } from './skill-index.ts';
export { ALLOWED_SECTIONS, MAX_BODY_LINES, MAX_DESCRIPTION_LENGTH, type Skill } from './types.ts';
export { validateSkills } from './validate.ts';
