// The files of the owner's Matrix messages (m.file, m.image, m.audio and voice notes), fetched
// through the homeserver's authenticated media API with the bot's token, and decrypted when the
// room is encrypted (EncryptedFile: AES-256-CTR, the ciphertext's SHA-256 checked first).
import { createDecipheriv, createHash } from 'node:crypto';
import { DownloadFailed, fetchCapped } from '../../src/channel/capped-download.ts';
import type { InboundAttachment } from '../../src/channel/port.ts';

export interface EncryptedFile {
  url: string;
  key: { kty?: string; alg?: string; k: string };
  iv: string;
  hashes: Record<string, string>;
  v?: string;
}

export interface MediaSource {
  homeserver: string;
  accessToken: string;
}

interface MediaContent {
  msgtype?: string;
  body?: unknown;
  filename?: unknown;
  url?: unknown;
  file?: EncryptedFile;
  info?: { mimetype?: unknown; size?: unknown; duration?: unknown };
  'org.matrix.msc3245.voice'?: unknown;
}

const KINDS: Record<string, InboundAttachment['kind']> = {
  'm.file': 'document',
  'm.image': 'photo',
  'm.audio': 'audio',
};

/** `mxc://server/id`, split; undefined for anything else (no path tricks reach the URL). */
export function parseMxc(url: string): { server: string; mediaId: string } | undefined {
  const m = /^mxc:\/\/([A-Za-z0-9.:[\]-]+)\/([A-Za-z0-9_-]+)$/.exec(url);
  return m ? { server: m[1] as string, mediaId: m[2] as string } : undefined;
}

const fromBase64 = (text: string) => Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');

/** The plaintext of an encrypted attachment; refuses a file whose hash or key does not check out. */
export function decryptAttachment(ciphertext: Uint8Array, file: EncryptedFile): Uint8Array {
  if (file.key.alg !== undefined && file.key.alg !== 'A256CTR')
    throw new DownloadFailed(`the file is encrypted with ${file.key.alg}, which I do not know`);
  const expected = file.hashes.sha256;
  if (!expected) throw new DownloadFailed('the encrypted file carries no SHA-256 to check it by');
  const actual = createHash('sha256').update(ciphertext).digest();
  if (!actual.equals(fromBase64(expected)))
    throw new DownloadFailed('the encrypted file does not match its SHA-256 (changed on the way?)');
  const key = fromBase64(file.key.k);
  const iv = fromBase64(file.iv);
  if (key.length !== 32 || iv.length !== 16)
    throw new DownloadFailed('the encrypted file has a malformed key');
  const decipher = createDecipheriv('aes-256-ctr', key, iv);
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
}

/** Undefined when the message is not a file of a kind steward reads; `unsupported` for m.video. */
export function mediaOf(
  content: MediaContent,
  source: MediaSource,
): { caption: string; attachment?: InboundAttachment; unsupported?: string } | undefined {
  if (content.msgtype === 'm.video') return { caption: '', unsupported: 'videos' };
  const kind = content.msgtype ? KINDS[content.msgtype] : undefined;
  if (!kind) return undefined;
  const body = typeof content.body === 'string' ? content.body : '';
  const filename = typeof content.filename === 'string' ? content.filename : undefined;
  // With a separate file name, the body is the sender's caption (the media-caption convention).
  const caption = filename !== undefined && filename !== body ? body : '';
  const encrypted = content.file;
  const mxc = encrypted?.url ?? (typeof content.url === 'string' ? content.url : '');
  const where = parseMxc(mxc);
  if (!where) return { caption, unsupported: 'a file without a valid mxc:// address' };
  const info = content.info ?? {};
  const voice = kind === 'audio' && content['org.matrix.msc3245.voice'] !== undefined;
  const attachment: InboundAttachment = {
    kind: voice ? 'voice' : kind,
    download: async (max, signal) => {
      const url = `${source.homeserver}/_matrix/client/v1/media/download/${encodeURIComponent(where.server)}/${encodeURIComponent(where.mediaId)}`;
      const data = await fetchCapped(
        url,
        { headers: { authorization: `Bearer ${source.accessToken}` }, signal },
        max,
      );
      return encrypted ? decryptAttachment(data, encrypted) : data;
    },
  };
  const name = filename ?? body;
  if (name !== '' && kind !== 'photo') attachment.name = name;
  if (typeof info.mimetype === 'string') attachment.mime = info.mimetype;
  if (typeof info.size === 'number') attachment.size = info.size;
  if (typeof info.duration === 'number') attachment.durationS = Math.round(info.duration / 1000);
  return { caption, attachment };
}
