// A permission prompt as a Matrix message, and the same message once it is decided. Pure.
import type { PermissionPrompt } from '../../src/channel/port.ts';
import { escapeHtml, HTML_FORMAT, type MessageContent } from './render.ts';

/** Arguments longer than this go in a file next to the prompt rather than in the message. */
export const INLINE_ARGS_CHARS = 20_000;

export interface PromptText {
  body: string;
  html: string;
}

const fenceFor = (text: string) =>
  '`'.repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((m) => m[0].length + 1)));

/** What the owner decides on: the tool, the exact full arguments, the danger and the reason. */
export function promptText(prompt: PermissionPrompt, argsFile?: string): PromptText {
  const fence = fenceFor(prompt.args);
  // A shell call shows its command line as judged; other tools their arguments as JSON.
  const json = /^\s*[{[]/.test(prompt.args);
  const argsBody = argsFile
    ? `Arguments: ${prompt.args.length} characters, in full in the file ${argsFile} above.`
    : `Arguments:\n${fence}${json ? 'json' : ''}\n${prompt.args}\n${fence}`;
  const argsHtml = argsFile
    ? `<p>Arguments: ${prompt.args.length} characters, in full in the file <code>${escapeHtml(argsFile)}</code> above.</p>`
    : `<p>Arguments:</p><pre><code${json ? ' class="language-json"' : ''}>${escapeHtml(prompt.args)}</code></pre>`;
  return {
    body: [
      `🔐 Permission needed: ${prompt.tool}`,
      argsBody,
      `Danger: ${prompt.score} (${prompt.level}), layer: ${prompt.layer}`,
      `Why: ${prompt.rationale}`,
      ...(prompt.layer === 'egress' ? ['🔁 / session allows this host for the rest of the session.'] : []),
    ].join('\n'),
    html: [
      `<p>🔐 <strong>Permission needed:</strong> <code>${escapeHtml(prompt.tool)}</code></p>`,
      argsHtml,
      `<p>Danger: <strong>${prompt.score} (${escapeHtml(prompt.level)})</strong>, layer: <code>${escapeHtml(prompt.layer)}</code><br>`,
      `Why: ${escapeHtml(prompt.rationale)}</p>`,
      ...(prompt.layer === 'egress'
        ? ['<p>🔁 / session allows this host for the rest of the session.</p>']
        : []),
    ].join(''),
  };
}

const ASK = 'React ✅ once · 🔁 for this session · ❌ deny, or reply once, session or deny.';

/** The prompt as first posted: the question plus how to answer it. */
export function askingContent(text: PromptText): MessageContent {
  return {
    msgtype: 'm.text',
    body: `${text.body}\n${ASK}`,
    format: HTML_FORMAT,
    formatted_body: `${text.html}<p><em>${escapeHtml(ASK)}</em></p>`,
  };
}

/** One line saying how a prompt ended. */
export function outcomeLine(outcome: string, decidedBy: string): string {
  switch (outcome) {
    case 'once':
      return `✅ Approved once by ${decidedBy}`;
    case 'session':
      return `🔁 Allowed for this session by ${decidedBy}`;
    case 'deny':
      return `❌ Denied by ${decidedBy}`;
    case 'timeout':
      return '⌛ No answer in time: not run';
    default:
      return '⌛ Closed: nothing was run';
  }
}

/** The prompt after its decision: the same question, the outcome instead of how to answer. */
export function decidedContent(text: PromptText, line: string): MessageContent {
  return {
    msgtype: 'm.text',
    body: `${text.body}\n${line}`,
    format: HTML_FORMAT,
    formatted_body: `${text.html}<p><strong>${escapeHtml(line)}</strong></p>`,
  };
}
