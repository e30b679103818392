// How a permission question looks in the owner's chat, and how it looks once settled. Pure: the
// channel sends what these return. The arguments are shown exactly and in full, or not offered
// for approval at all.
import type { InlineKeyboardButton, InlineKeyboardMarkup } from 'grammy/types';
import type { PermissionDecision, PermissionPrompt } from '../../src/channel/port.ts';
import { encodeButton } from './callback-data.ts';
import { clip, escapeHtml } from './html.ts';
import { MESSAGE_LIMIT } from './split-html.ts';

/** Telegram's caption limit; a caption here stays well below it (tool name and rationale are clipped). */
export const CAPTION_LIMIT = 1024;
/** How much of a too-long command the fallback shows (it can then only be denied). */
const PREVIEW_CHARS = 1500;

export type PromptPlan =
  | { kind: 'message'; html: string; keyboard: InlineKeyboardMarkup }
  | {
      kind: 'document';
      filename: string;
      content: string;
      caption: string;
      keyboard: InlineKeyboardMarkup;
      /** Sent instead when the file cannot be delivered: a preview, and only a Deny button. */
      fallback: { html: string; keyboard: InlineKeyboardMarkup };
    };

const button = (text: string, requestId: string, decision: PermissionDecision): InlineKeyboardButton => ({
  text,
  callback_data: encodeButton({ kind: 'decide', requestId, decision }),
});

export function decisionKeyboard(
  requestId: string,
  approvable = true,
  session = 'Session',
): InlineKeyboardMarkup {
  const deny = button('Deny', requestId, 'deny');
  return {
    inline_keyboard: [
      approvable ? [button('Once', requestId, 'once'), button(session, requestId, 'session'), deny] : [deny],
    ],
  };
}

/** An egress question's "session" allows the host for the session, and says so on its button. */
const sessionButton = (prompt: PermissionPrompt) => (prompt.layer === 'egress' ? 'This host' : 'Session');

/** An empty keyboard: editing a message with it removes the buttons. */
export const NO_BUTTONS: InlineKeyboardMarkup = { inline_keyboard: [] };

const heading = (prompt: PermissionPrompt) =>
  `🔐 <b>Permission needed</b>: <code>${escapeHtml(clip(prompt.tool, 64))}</code>`;

function footer(prompt: PermissionPrompt, rationaleMax = Number.POSITIVE_INFINITY): string {
  const lines = [
    `Danger: ${prompt.score} (${escapeHtml(prompt.level)}) · layer: ${escapeHtml(prompt.layer)}`,
    `Why: ${escapeHtml(clip(prompt.rationale, rationaleMax))}`,
  ];
  if (prompt.score >= 3)
    lines.push('<i>No session grant covers a destructive call: Session runs it once.</i>');
  return lines.join('\n');
}

const count = (n: number) => n.toLocaleString('en-US');

/** The question as one message when the arguments fit, else as a file with the buttons on it. */
export function promptPlan(prompt: PermissionPrompt, limit = MESSAGE_LIMIT): PromptPlan {
  const html = `${heading(prompt)}\n<pre>${escapeHtml(prompt.args)}</pre>\n${footer(prompt)}`;
  if (html.length <= limit)
    return {
      kind: 'message',
      html,
      keyboard: decisionKeyboard(prompt.requestId, true, sessionButton(prompt)),
    };
  const size = `${count(prompt.args.length)} characters`;
  const caption = [
    heading(prompt),
    `The arguments (${size}) are too long for a message: they are in this file, in full.`,
    footer(prompt, 300),
  ].join('\n');
  const fallback = [
    heading(prompt),
    `The arguments are ${size}: too long for a message, and the file holding them could not be sent. Only the start is shown below, so this can only be denied; ask for a shorter call.`,
    `<pre>${escapeHtml(clip(prompt.args, PREVIEW_CHARS))}</pre>`,
    footer(prompt, 300),
  ].join('\n');
  return {
    kind: 'document',
    filename: `${prompt.tool.replace(/[^A-Za-z0-9_-]/g, '_')}-arguments.txt`,
    content: prompt.args,
    caption,
    keyboard: decisionKeyboard(prompt.requestId, true, sessionButton(prompt)),
    fallback: { html: fallback, keyboard: decisionKeyboard(prompt.requestId, false) },
  };
}

/** The line added to a prompt once it is settled: who decided what. */
export function settledLine(decision: string, decidedBy: string, ownerId: string): string {
  const who = decidedBy === ownerId ? 'you' : decidedBy === 'steward' ? 'steward' : escapeHtml(decidedBy);
  switch (decision) {
    case 'once':
      return `✅ <b>Allowed once</b> by ${who}`;
    case 'session':
      return `✅ <b>Allowed for this session</b> by ${who}`;
    case 'deny':
      return `⛔ <b>Denied</b> by ${who}`;
    case 'timeout':
      return '⌛ <b>Not answered in time</b>: not run';
    default:
      return `Settled (${escapeHtml(decision)}) by ${who}`;
  }
}
