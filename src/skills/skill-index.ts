import type { Skill } from './types.ts';

/**
 * The skills index for the system prompt: exactly one line per skill, "- <name>: <description>",
 * sorted by name, and nothing of any body. Empty when there are no skills.
 */
export function skillIndex(skills: readonly Skill[]): string {
  return [...skills]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((s) => `- ${s.name}: ${s.description.replace(/\s+/g, ' ').trim()}`)
    .join('\n');
}
