// Description collisions. The model chooses a skill from its one-line description alone, so two
// descriptions that say nearly the same thing make the choice a coin toss.
//
// Similarity is the Jaccard index of the two descriptions' content words: lower-cased words,
// split at anything not a letter or digit (so "plan-first" is "plan" and "first"), with common
// function words and the trigger's own words ("use", "when", "asked", …) dropped, and a light
// plural fold ("skills" → "skill", "policies" → "policy"). Word order is ignored on purpose: a
// reworded copy is as confusing as a verbatim one.
//
// Threshold 0.6. For two descriptions of similar size, J ≥ 0.6 means about three quarters of each
// one's content words also appear in the other (J = s / (2n - s) with s shared of n each gives
// s/n = 2J / (1 + J) = 0.75). A copy with one or two words changed scores 0.7-0.9; two skills in
// the same field that each say what they are for (research vs fact-checking, travel vs commuting)
// share a few topic words and score under 0.35; the seed skills score under 0.1 against each
// other. The gap between those bands is wide, so the exact value is not delicate.

export const COLLISION_THRESHOLD = 0.6;

const STOPWORDS = new Set(
  (
    'a an the and or nor but of for to in on at by with from into onto as is are be been being was were ' +
    'it its this that these those there their them they you your yours we our us i me my he she his her ' +
    'any all some each every no not so than then too very can could should would will may might must ' +
    'do does did done has have had about over under via per up out off also just only own same other ' +
    'use using used when whenever while where which who whom what how why if asked ask asks asking ' +
    'owner user someone something want wants need needs'
  ).split(' '),
);

function fold(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/** The content words of a description, as a set. */
export function contentWords(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w !== '' && !STOPWORDS.has(w))
      .map(fold),
  );
}

/** Jaccard index of the content words of two descriptions: 0 (disjoint) … 1 (same words). */
export function descriptionSimilarity(a: string, b: string): number {
  const left = contentWords(a);
  const right = contentWords(b);
  if (left.size === 0 && right.size === 0) return 1;
  let shared = 0;
  for (const w of left) if (right.has(w)) shared++;
  return shared / (left.size + right.size - shared);
}
