// What a Telegram message carries besides text, as the port's attachments: documents, photos,
// voice notes, audio, and forwarded or externally quoted messages. Files come only from the
// configured Bot API root (getFile, then <root>/file/bot<token>/<path>), fetched when the core asks.
import { GrammyError } from 'grammy';
import type { Message } from 'grammy/types';
import { DownloadFailed, fetchCapped } from '../../src/channel/capped-download.ts';
import { AttachmentTooLarge, type InboundAttachment, type InboundQuote } from '../../src/channel/port.ts';
import { forwardLabel, type LegacyForward, originLabel } from './forward-origin.ts';

/** Telegram's own cap on what a bot may download through the cloud Bot API. */
const PLATFORM_LIMIT = 'Telegram hands bots files up to 20 MB';

export interface TelegramFiles {
  getFile(fileId: string): Promise<{ file_path?: string; file_size?: number }>;
  /** The download URL of a file path: under the configured root, never anywhere else. */
  url(filePath: string): string;
}

export interface TelegramInbound {
  /** The owner's words: empty for a forward, whose text is someone else's. */
  text: string;
  attachments: InboundAttachment[];
  quote?: InboundQuote;
  unsupported?: string;
}

const UNSUPPORTED: ReadonlyArray<[keyof Message, string]> = [
  ['video', 'videos'],
  ['video_note', 'video notes'],
  ['animation', 'animations'],
  ['sticker', 'stickers'],
  ['location', 'locations'],
  ['venue', 'venues'],
  ['contact', 'contacts'],
  ['poll', 'polls'],
  ['dice', 'dice'],
];

/**
 * The download URL of a `getFile` path, under `<root>/file/bot<token>/` and nowhere else: a path
 * that is absolute, empty, or has `.`/`..`/empty segments or backslashes is refused (URL parsing
 * would resolve `..` out of the file folder), and each segment is percent-encoded.
 */
export function telegramFileUrl(root: string, token: string, filePath: string): string {
  const segments = filePath.split('/');
  const bad = (s: string) => s === '' || s === '.' || s === '..' || /[\\\p{Cc}]/u.test(s);
  if (segments.some(bad))
    throw new DownloadFailed('Telegram gave a file path that leaves its file folder; not downloaded');
  return `${root}/file/bot${token}/${segments.map(encodeURIComponent).join('/')}`;
}

export function telegramInbound(message: Message, files: TelegramFiles): TelegramInbound {
  const words = message.text ?? message.caption ?? '';
  const attachments: InboundAttachment[] = [];
  const forwarded = forwardLabel(message as Message & LegacyForward);
  const file = (fileId: string, size: number | undefined) => (max: number, signal?: AbortSignal) =>
    download(files, fileId, size, max, signal);
  if (message.document) {
    const d = message.document;
    attachments.push(
      announce(
        { kind: 'document', name: d.file_name, mime: d.mime_type, size: d.file_size },
        file(d.file_id, d.file_size),
      ),
    );
  }
  if (message.photo && message.photo.length > 0) {
    const sizes = [...message.photo].sort((a, b) => (a.file_size ?? 0) - (b.file_size ?? 0));
    const smallest = sizes[0]?.file_size;
    attachments.push(
      announce({ kind: 'photo', mime: 'image/jpeg', size: smallest }, (max, signal) => {
        // The largest rendition that fits the cap; Telegram keeps several.
        const fit = sizes.filter((s) => s.file_size === undefined || s.file_size <= max).at(-1) ?? sizes[0];
        return download(files, (fit ?? { file_id: '' }).file_id, fit?.file_size, max, signal);
      }),
    );
  }
  if (message.voice) {
    const v = message.voice;
    attachments.push(
      announce(
        {
          kind: 'voice',
          mime: v.mime_type ?? 'audio/ogg',
          size: v.file_size,
          durationS: v.duration,
          name: 'voice.ogg',
        },
        file(v.file_id, v.file_size),
      ),
    );
  }
  if (message.audio) {
    const a = message.audio;
    attachments.push(
      announce(
        { kind: 'audio', name: a.file_name, mime: a.mime_type, size: a.file_size, durationS: a.duration },
        file(a.file_id, a.file_size),
      ),
    );
  }
  const unsupported = UNSUPPORTED.filter(([key]) => message[key] !== undefined).map(([, what]) => what);
  const result: TelegramInbound = { text: words, attachments };
  if (unsupported.length > 0) result.unsupported = unsupported.join(' or ');
  if (forwarded !== undefined) {
    // All of a forward is someone else's: its text, caption and files reach the model fenced.
    const origin = `forwarded from ${forwarded}`;
    result.text = '';
    if (words !== '') result.quote = { origin, text: words };
    for (const attachment of attachments) attachment.from = origin;
  } else if (message.external_reply && message.quote?.text) {
    // A reply to a message in another chat, with the part the owner quoted.
    result.quote = {
      origin: `quoted from ${originLabel(message.external_reply.origin)}`,
      text: message.quote.text,
    };
  }
  return result;
}

function announce(
  fields: {
    kind: InboundAttachment['kind'];
    name?: string | undefined;
    mime?: string | undefined;
    size?: number | undefined;
    durationS?: number | undefined;
  },
  fetchFile: (max: number, signal?: AbortSignal) => Promise<Uint8Array>,
): InboundAttachment {
  const out: InboundAttachment = { kind: fields.kind, download: fetchFile };
  if (fields.name) out.name = fields.name;
  if (fields.mime) out.mime = fields.mime;
  if (fields.size !== undefined) out.size = fields.size;
  if (fields.durationS !== undefined) out.durationS = fields.durationS;
  return out;
}

async function download(
  files: TelegramFiles,
  fileId: string,
  size: number | undefined,
  max: number,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  if (size !== undefined && size > max) throw new AttachmentTooLarge(max, size);
  let found: { file_path?: string; file_size?: number };
  try {
    found = await files.getFile(fileId);
  } catch (error) {
    if (error instanceof GrammyError && /too big/i.test(error.description))
      throw new AttachmentTooLarge(max, size, PLATFORM_LIMIT);
    const why = error instanceof GrammyError ? error.description : (error as Error).name;
    throw new DownloadFailed(`Telegram would not hand over the file (${why})`);
  }
  if (found.file_size !== undefined && found.file_size > max)
    throw new AttachmentTooLarge(max, found.file_size);
  if (!found.file_path) throw new DownloadFailed('Telegram gave no path to download the file from');
  return fetchCapped(files.url(found.file_path), { signal }, max);
}
