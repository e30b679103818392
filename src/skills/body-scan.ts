// Reads a skill body for the validator: its section headings and anything that looks like a
// worked example. Skills are principles only; an example teaches the model to copy a surface
// instead of applying a rule, and costs tokens on every load. The detection is deliberately
// narrow: prose that mentions the word "example" ("for example, …") passes; labelled examples,
// sample exchanges and dialogue-shaped code blocks do not.

export interface Heading {
  line: number;
  level: number;
  text: string;
}

export interface ExampleFinding {
  line: number;
  /** Short, quotable: what was seen there. */
  what: string;
}

/** A heading announcing examples, samples, shots, demos, walkthroughs or transcripts. */
const EXAMPLE_HEADING =
  /\b(?:examples?|samples?|(?:few|n|one|multi)[- ]?shots?|demos?|demonstrations?|walk-?throughs?|transcripts?|sample (?:dialogues?|conversations?))\b/i;

/** A line labelled as an example: "Example:", "Example 2 —", "Worked example:", "Examples:". */
const EXAMPLE_LABEL =
  /^(?:worked |sample |good |bad )?examples?(?: #?\d+[a-z]?| [a-z])?\s*(?:[:—–]|-\s)|^examples? #?\d+\b/i;

/** Who speaks first in a sample exchange, and who answers. */
const ASKING = /^(user|human|customer|q|question|input|prompt)(?: \d+)?\s*:/i;
const ANSWERING =
  /^(assistant|ai|a|answer|output|response|model|bot|agent|steward|expected output)(?: \d+)?\s*:/i;

/** A chat-format message inside a code block. */
const JSON_ROLE = /"role"\s*:\s*"(?:user|assistant|system)"/i;

/** Fence info strings that announce a conversation. */
const DIALOGUE_FENCE = /^(?:chat|dialogue|dialog|conversation|transcript)\b/i;

/** Drops quote marks, list markers and emphasis so labels are seen as the reader sees them. */
function plain(line: string): string {
  return line
    .trim()
    .replace(/^(?:>\s*)+/, '')
    .replace(/^(?:[-*+]|\d+[.)])\s+/, '')
    .replace(/[*_`]/g, '')
    .trim();
}

function speaker(line: string, pattern: RegExp): string | undefined {
  const m = pattern.exec(plain(line));
  return m ? `${m[1]}:` : undefined;
}

/** Headings and example findings of a body whose first line is file line `firstLine`. */
export function scanBody(
  body: string,
  firstLine: number,
): { headings: Heading[]; examples: ExampleFinding[] } {
  const headings: Heading[] = [];
  const examples: ExampleFinding[] = [];
  const lines = body.split('\n');
  let pendingAsk: { line: number; label: string } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] ?? '';
    const line = firstLine + i;
    const fence = /^\s*(`{3,}|~{3,})\s*(.*)$/.exec(text);
    if (fence) {
      const marker = fence[1] as string;
      const info = (fence[2] ?? '').trim();
      const inside: string[] = [];
      let j = i + 1;
      while (j < lines.length && !(lines[j] ?? '').trim().startsWith(marker)) inside.push(lines[j++] ?? '');
      const asks = inside.filter((l) => speaker(l, ASKING)).length;
      const answers = inside.filter((l) => speaker(l, ANSWERING)).length;
      if (DIALOGUE_FENCE.test(info)) {
        examples.push({ line, what: `code block marked "${info.split(/\s/)[0]}"` });
      } else if ((asks > 0 && answers > 0) || asks + answers >= 3 || inside.some((l) => JSON_ROLE.test(l))) {
        examples.push({ line, what: 'code block holding a sample dialogue' });
      }
      i = j;
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(text);
    if (heading) {
      const headingText = (heading[2] ?? '').trim();
      if (EXAMPLE_HEADING.test(headingText)) {
        examples.push({ line, what: `heading "${headingText}"` });
      } else {
        headings.push({ line, level: (heading[1] as string).length, text: headingText });
      }
      pendingAsk = undefined;
      continue;
    }
    if (EXAMPLE_LABEL.test(plain(text))) {
      examples.push({ line, what: `labelled example "${plain(text).slice(0, 40)}"` });
      continue;
    }
    const ask = speaker(text, ASKING);
    if (ask) {
      pendingAsk ??= { line, label: ask };
      continue;
    }
    const answer = speaker(text, ANSWERING);
    if (answer && pendingAsk) {
      examples.push({
        line: pendingAsk.line,
        what: `sample exchange ("${pendingAsk.label}" then "${answer}")`,
      });
      pendingAsk = undefined;
    }
  }
  return { headings, examples };
}
