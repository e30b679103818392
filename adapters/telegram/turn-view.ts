// What one turn looks like in a chat: the reply streams into one message that is edited as it
// grows and finally replaced by the rendered answer (never sent a second time), tool activity is
// one status line edited in place, and prompts, notices and stored outputs are messages of their own.
import { type Delivery, exhaustive, type OutboundEvent, type ReplySink } from '../../src/channel/port.ts';
import { clip, escapeHtml } from './html.ts';
import { type LiveMessage, liveMessage } from './live-message.ts';
import { markdownToTelegramHtml } from './markdown-html.ts';
import { offloadedView } from './payloads.ts';
import type { PromptRegistry } from './prompt-registry.ts';
import { NO_BUTTONS, promptPlan, settledLine } from './prompt-view.ts';
import { MESSAGE_LIMIT, splitTelegramHtml } from './split-html.ts';
import { statusLine, type ToolActivity } from './status-line.ts';
import type { TelegramOut } from './telegram-out.ts';

export interface TurnViewDeps {
  out: TelegramOut;
  chatId: number;
  ownerId: string;
  prompts: PromptRegistry;
}

export interface TurnView {
  sink: ReplySink;
  /** True once the turn's reply is shown. */
  readonly replied: boolean;
  /** Waits for every pending edit. */
  finish(): Promise<void>;
}

/** How long the first message of a turn waits for more text before it is sent. */
const FIRST_MESSAGE_MS = 30;

interface Segment {
  text: string;
  message: LiveMessage;
  /** The first send, until it is due. */
  first?: NodeJS.Timeout;
}

/** While streaming, the text is shown plain (Markdown is rendered once the text is complete). */
const streamingHtml = (text: string) => escapeHtml(clip(text, MESSAGE_LIMIT - 200));

export function turnView({ out, chatId, ownerId, prompts }: TurnViewDeps): TurnView {
  let segment: Segment | undefined;
  let status: { activity: ToolActivity[]; message: LiveMessage } | undefined;
  let replied = false;
  const settling: Promise<void>[] = [];

  /**
   * Shows `markdown` rendered: the first part in `message` (if any), the rest as new messages.
   * Says whether every part reached the chat, and the ids of the messages that hold it.
   */
  const showRendered = async (markdown: string, message?: LiveMessage): Promise<Delivery> => {
    const parts = splitTelegramHtml(markdownToTelegramHtml(markdown));
    const [first, ...rest] = parts;
    const delivery: Delivery = { delivered: true, messageIds: [] };
    if (first === undefined) return delivery;
    const note = (ok: boolean, id: number | undefined) => {
      if (!ok) delivery.delivered = false;
      if (ok && id !== undefined) delivery.messageIds.push(String(id));
    };
    if (message) note(await message.settle(first), message.id());
    else {
      const sent = await out.send(chatId, first);
      note(sent.ok, sent.ok ? sent.messageId : undefined);
    }
    for (const part of rest) {
      const sent = await out.send(chatId, part);
      note(sent.ok, sent.ok ? sent.messageId : undefined);
    }
    return delivery;
  };
  /** The text streamed so far stays, rendered; the next text starts a new message below. */
  const closeSegment = async () => {
    const open = segment;
    segment = undefined;
    if (!open) return;
    clearTimeout(open.first);
    await open.message.ready();
    settling.push(showRendered(open.text, open.message).then(() => {}));
  };
  /** Whatever is already on its way is placed before the next message. */
  const inOrder = async () => {
    await closeSegment();
    await status?.message.ready();
  };
  const showStatus = () => status?.message.update(escapeHtml(statusLine(status.activity)));

  const handle = async (event: OutboundEvent): Promise<Delivery | undefined> => {
    switch (event.type) {
      case 'text_delta': {
        if (!segment) {
          // The first message waits a moment for more text, so a short reply that is complete by
          // then goes out whole, as one send with no edit (and so no wait for the edit pacer).
          const open: Segment = { text: '', message: liveMessage(out, chatId) };
          open.first = setTimeout(() => {
            open.first = undefined;
            open.message.update(streamingHtml(open.text));
          }, FIRST_MESSAGE_MS);
          segment = open;
        }
        segment.text += event.text;
        if (!segment.first) segment.message.update(streamingHtml(segment.text));
        return;
      }
      case 'tool_started': {
        await closeSegment();
        if (!status) status = { activity: [], message: liveMessage(out, chatId) };
        status.activity.push({ callId: event.callId, tool: event.tool, args: event.args, state: 'running' });
        showStatus();
        return;
      }
      case 'tool_finished': {
        const entry = status?.activity.find((a) => a.callId === event.callId);
        if (entry) entry.state = event.ok ? 'ok' : 'failed';
        showStatus();
        return;
      }
      case 'output_offloaded': {
        await inOrder();
        const view = offloadedView(event);
        await out.send(chatId, view.html, view.keyboard);
        return;
      }
      case 'notice': {
        await inOrder();
        await out.send(chatId, `${event.level === 'error' ? '⚠️' : 'ℹ️'} ${escapeHtml(event.text)}`);
        return;
      }
      case 'permission_prompt': {
        await inOrder();
        const plan = promptPlan(event.prompt);
        const { requestId } = event.prompt;
        if (plan.kind === 'message') {
          const sent = await out.send(chatId, plan.html, plan.keyboard);
          if (sent.ok)
            prompts.remember(requestId, {
              chatId,
              messageId: sent.messageId,
              html: plan.html,
              caption: false,
            });
          return;
        }
        const file = await out.sendDocument(chatId, plan);
        if (file.ok) {
          prompts.remember(requestId, {
            chatId,
            messageId: file.messageId,
            html: plan.caption,
            caption: true,
          });
          return;
        }
        const { html, keyboard } = plan.fallback;
        const sent = await out.send(chatId, html, keyboard);
        if (sent.ok) prompts.remember(requestId, { chatId, messageId: sent.messageId, html, caption: false });
        return;
      }
      case 'permission_settled': {
        const shown = prompts.get(event.requestId);
        if (!shown) return;
        prompts.forget(event.requestId);
        const html = `${shown.html}\n\n${settledLine(event.decision, event.decidedBy, ownerId)}`;
        await out.pace(shown.chatId);
        if (shown.caption) await out.editCaption(shown.chatId, shown.messageId, html, NO_BUTTONS);
        else await out.edit(shown.chatId, shown.messageId, html, NO_BUTTONS);
        return;
      }
      case 'reply': {
        const open = segment;
        segment = undefined;
        clearTimeout(open?.first);
        await status?.message.ready();
        // The streamed message becomes the answer: edited, never sent again.
        const shown =
          open || event.text.trim() !== ''
            ? await showRendered(event.text || (open?.text ?? ''), open?.message)
            : undefined;
        replied = true;
        return shown;
      }
      case 'turn_started':
      case 'turn_ended':
        return;
      default:
        exhaustive(event);
    }
  };

  return {
    sink: handle,
    get replied() {
      return replied;
    },
    async finish() {
      await closeSegment();
      await Promise.all(settling);
      await status?.message.idle();
    },
  };
}
