// `/output <ref>` and the "Get the whole output" button: the core pages the stored text (and
// checks that the asker is the owner and the output belongs to this chat); it goes out as a file.
import type { ChannelPort } from '../../src/channel/port.ts';
import { DOCUMENT_LIMIT_BYTES, outputDocument } from './payloads.ts';
import type { TelegramOut } from './telegram-out.ts';

export interface OutputDeliveryDeps {
  assistant: Pick<ChannelPort, 'readOutput'>;
  out: TelegramOut;
  channel: string;
}

/** Sends the output as a file; the text says how it went, for the caller to show. */
export async function deliverOutput(
  { assistant, out, channel }: OutputDeliveryDeps,
  input: { chatId: number; senderId: string; ref: string },
): Promise<{ ok: boolean; text: string }> {
  const reading = await assistant.readOutput({
    channel,
    room: String(input.chatId),
    senderId: input.senderId,
    ref: input.ref,
  });
  if (!reading.ok) return reading;
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const page of reading.pages) {
    const bytes = Buffer.from(page, 'utf8');
    if (size + bytes.length > DOCUMENT_LIMIT_BYTES) {
      chunks.push(bytes.subarray(0, DOCUMENT_LIMIT_BYTES - size));
      size = DOCUMENT_LIMIT_BYTES;
      truncated = true;
      break;
    }
    chunks.push(bytes);
    size += bytes.length;
  }
  const document = outputDocument({
    ref: input.ref,
    tool: reading.tool,
    bytes: reading.bytes,
    lines: reading.lines,
    content: Buffer.concat(chunks, size),
    truncated,
  });
  const sent = await out.sendDocument(input.chatId, document);
  if (sent.ok) return { ok: true, text: 'Sent as a file.' };
  return { ok: false, text: `Could not send the output as a file (${sent.reason}).` };
}
