// The exact payloads of the calls the emulator cannot answer (setMyCommands, sendChatAction,
// sendDocument), built by pure functions so tests can check them, plus the offloaded-output line.
import { InputFile } from 'grammy';
import type { BotCommand, InlineKeyboardMarkup } from 'grammy/types';
import { encodeButton } from './callback-data.ts';
import { escapeHtml } from './html.ts';

/** The command menu. /new, /help, /cost, /grants, /revoke, /tools and /research are the core's; /output is ours. */
export const BOT_COMMANDS: readonly BotCommand[] = [
  { command: 'start', description: 'Say hello and list the commands' },
  { command: 'help', description: 'What the commands do' },
  { command: 'new', description: 'Start a fresh session (the old one stays in the log)' },
  { command: 'cost', description: 'Model usage and cost today and in this session' },
  { command: 'status', description: 'What steward is doing: channels, questions, digests, spend' },
  { command: 'budget', description: 'Spend against the caps; /budget daily <dollars> for today' },
  { command: 'grants', description: 'What you allowed for this session' },
  { command: 'revoke', description: 'Take back a grant: /revoke <id> or /revoke all' },
  { command: 'tools', description: 'Tools: built-in, MCP servers connected, loaded in this session' },
  { command: 'output', description: 'A stored tool output as a file: /output <ref>' },
  { command: 'research', description: 'Answer from evidence: /research <question>' },
];

export function commandsPayload() {
  return { commands: [...BOT_COMMANDS], scope: { type: 'all_private_chats' as const } };
}

export function typingPayload(chatId: number) {
  return { chat_id: chatId, action: 'typing' as const };
}

export interface DocumentSpec {
  filename: string;
  content: string | Uint8Array;
  /** Telegram HTML. */
  caption?: string;
  keyboard?: InlineKeyboardMarkup;
}

export function documentPayload(chatId: number, spec: DocumentSpec) {
  const bytes = typeof spec.content === 'string' ? Buffer.from(spec.content, 'utf8') : spec.content;
  return {
    chat_id: chatId,
    document: new InputFile(bytes, spec.filename),
    ...(spec.caption ? { caption: spec.caption, parse_mode: 'HTML' as const } : {}),
    ...(spec.keyboard ? { reply_markup: spec.keyboard } : {}),
  };
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** The short line for a stored large result, with the command and a button to get it whole. */
export function offloadedView(event: { ref: string; tool: string; bytes: number; lines: number }): {
  html: string;
  keyboard: InlineKeyboardMarkup;
} {
  const html = [
    `📦 ${escapeHtml(event.tool)} output stored: ${formatBytes(event.bytes)}, ${event.lines.toLocaleString('en-US')} lines`,
    `ref <code>${escapeHtml(event.ref)}</code> · the whole of it: <code>/output ${escapeHtml(event.ref)}</code>`,
  ].join('\n');
  return {
    html,
    keyboard: {
      inline_keyboard: [
        [{ text: 'Get the whole output', callback_data: encodeButton({ kind: 'output', ref: event.ref }) }],
      ],
    },
  };
}

/** Telegram bots may upload up to 50 MB; a larger output is sent cut, and says so. */
export const DOCUMENT_LIMIT_BYTES = 45 * 1024 * 1024;

export function outputDocument(output: {
  ref: string;
  tool: string;
  bytes: number;
  lines: number;
  content: Uint8Array;
  truncated: boolean;
}): DocumentSpec {
  const cut = output.truncated ? ` (only the first ${formatBytes(output.content.length)})` : '';
  return {
    filename: `${output.tool.replace(/[^A-Za-z0-9_-]/g, '_')}-output-${output.ref.slice(0, 8)}.txt`,
    content: output.content,
    caption: `${escapeHtml(output.tool)} output, ${output.lines.toLocaleString('en-US')} lines, ${formatBytes(output.bytes)}${cut}`,
  };
}
