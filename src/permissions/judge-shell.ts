// A shell command judged as the chain judges it without grants: policy guard first (deny), then
// the classifier's score. Pure and synchronous; `steward policy check` prints exactly this.
import { resolve } from 'node:path';
import { type Classification, classify } from './classify-shell.ts';
import { withDialectHazards } from './dialect.ts';
import type { Verdict } from './gate.ts';
import type { Judgement } from './judgement.ts';
import { refusePath } from './path-rules.ts';
import { guardCommand } from './policy-guard.ts';
import { VAR_CLOSE, VAR_OPEN } from './shell-marks.ts';
import { parseCommand } from './shell-parse.ts';

/** Longer commands are not judged piece by piece: they always ask. */
export const MAX_JUDGED_LENGTH = 64 * 1024;
const MAX_NESTING = 3;

export interface ShellAnalysis {
  /** Why the policy guard refuses the command, if it does. */
  refused?: string;
  classification: Classification;
}

const SENTINEL = new RegExp(`${VAR_OPEN}([^${VAR_CLOSE}]*)${VAR_CLOSE}`, 'g');

/** A word handed to `sh -c` or eval, as shell text again: variables back in `$name` form. */
const asShellText = (word: string) =>
  word.replace(SENTINEL, (_, name: string) => (name.startsWith('!') ? '$_unknown' : `\${${name}}`));

export function analyzeShell(command: string, workspace: string, depth = 0): ShellAnalysis {
  const parsed = parseCommand(command);
  const classification = withDialectHazards(classify(parsed), command);
  const writes = classification.segments.map((s) => s.score > 0);
  const refused =
    // The shell tool runs bash 5.2 with SHELL_DIALECT's glob options, on the host and in containers.
    guardCommand(parsed, workspace, writes, { dialect: 'bash' }) ??
    guardExtras(classification.segments, workspace, depth);
  return refused ? { refused, classification } : { classification };
}

/** What the classifier found the command opens or runs beyond its own words. */
function guardExtras(segments: Judgement[], workspace: string, depth: number): string | undefined {
  for (const segment of segments) {
    for (const path of segment.paths ?? []) {
      const refused = refusePath(path, { workspace });
      if (refused) return refused;
    }
    if (depth >= MAX_NESTING) continue;
    for (const text of segment.nested ?? []) {
      const refused = analyzeShell(asShellText(text), workspace, depth + 1).refused;
      if (refused) return refused;
    }
  }
  return undefined;
}

/** The verdict for one shell command, exactly as the chain gives it when no grant applies. */
export function judgeShell(command: string, workspace: string): Verdict {
  if (typeof command !== 'string') {
    return { verdict: 'deny', layer: 'policy', score: 3, rationale: 'shell needs a command string' };
  }
  const canonical = command;
  if (command.trim() === '') {
    return {
      verdict: 'allow',
      layer: 'classifier',
      score: 0,
      rationale: 'empty command: nothing runs',
      canonical,
    };
  }
  if (command.length > MAX_JUDGED_LENGTH) {
    return {
      verdict: 'ask',
      layer: 'classifier',
      score: 3,
      rationale: `a ${command.length}-character command is too long to judge`,
      canonical,
    };
  }
  return safely(command, resolve(workspace)).verdict;
}

/**
 * analyzeShell + verdictOf, with the analysis for callers that need its segments; a bug in a rule
 * fails closed (deny if a raw token is refused, else ask) and then has no analysis.
 */
export function safely(command: string, workspace: string): { verdict: Verdict; analysis?: ShellAnalysis } {
  try {
    const analysis = analyzeShell(command, workspace);
    return { verdict: verdictOf(analysis.refused, analysis.classification, command), analysis };
  } catch (error) {
    const what = `the classifier failed (${(error as Error).message})`;
    const refused = command
      .split(/[\s'"`;&|<>()]+/)
      .map((word) => refusePath(word, { workspace }))
      .find(Boolean);
    return { verdict: verdictOf(refused, { score: 3, reason: what, segments: [] }, command) };
  }
}

export function verdictOf(refused: string | undefined, c: Classification, canonical: string): Verdict {
  const rationale = oneLine(refused ?? c.reason);
  // A refusal carries score 3 whatever the classifier thought: it is never run.
  if (refused) return { verdict: 'deny', layer: 'policy', score: 3, rationale, canonical };
  if (c.score === 0) return { verdict: 'allow', layer: 'classifier', score: 0, rationale, canonical };
  if (c.score >= 3) return { verdict: 'ask', layer: 'classifier', score: 3, rationale, canonical };
  return { verdict: 'ask', layer: 'ask', score: c.score, rationale, canonical };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: rationales are one printable line
const CONTROL = /[\u0000-\u001f\u007f]+/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: as above
const CONTROL_ANY = /[\u0000-\u001f\u007f]/;
const oneLine = (text: string) => {
  const flat = CONTROL_ANY.test(text) ? text.replace(CONTROL, ' ') : text;
  return flat.length > 200 ? `${flat.slice(0, 199)}…` : flat;
};
