// Images are stored like an offloaded output (base64, by ref) so the event log never holds their
// bytes; just before a model request, the refs of the conversation are filled with the data.
import type { AttachmentRecord } from '../core/session-events.ts';
import type { ChatMessage } from '../gateway/types.ts';
import type { OutputStore } from '../offload/output-store.ts';

/** Base64 lines of this length keep every stored line (and page) small. */
const LINE = 4096;
export const IMAGE_TOOL = 'photo';

/** The image type by its magic bytes; undefined for anything a vision API would not take. */
export function imageMime(bytes: Uint8Array): string | undefined {
  const b = bytes;
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return 'image/png';
  if (b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38) return 'image/gif';
  const riff = String.fromCharCode(...b.subarray(0, 4));
  const webp = String.fromCharCode(...b.subarray(8, 12));
  if (riff === 'RIFF' && webp === 'WEBP') return 'image/webp';
  return undefined;
}

export async function storeImage(
  outputs: OutputStore,
  sessionId: string,
  bytes: Uint8Array,
  mime: string,
): Promise<Extract<AttachmentRecord, { kind: 'image' }>> {
  const base64 = Buffer.from(bytes).toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < base64.length; i += LINE) lines.push(base64.slice(i, i + LINE));
  const stored = await outputs.write({ sessionId, tool: IMAGE_TOOL, trusted: false }, lines.join('\n'));
  return { kind: 'image', ref: stored.ref, mime, bytes: bytes.length };
}

/**
 * The conversation with each image's data read from the store. An image whose output expired
 * keeps no data, so providers leave it out and the text still says one was sent.
 */
export async function withImageData(
  messages: ChatMessage[],
  outputs: OutputStore,
  sessionId: string,
): Promise<ChatMessage[]> {
  if (!messages.some((m) => m.role === 'user' && m.images?.length)) return messages;
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (m.role !== 'user' || !m.images?.length) {
      out.push(m);
      continue;
    }
    const images = [];
    for (const image of m.images) {
      const page = await outputs.read(
        image.ref,
        sessionId,
        0,
        Number.MAX_SAFE_INTEGER,
        Number.POSITIVE_INFINITY,
      );
      images.push(page && page.count > 0 ? { ...image, data: page.text.replaceAll('\n', '') } : image);
    }
    out.push({ ...m, images });
  }
  return out;
}
