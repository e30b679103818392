// The one-line answers about attachments: what is supported, what is over a limit, what is missing.
// Pure, so the wording is table-tested and the same on every channel.
import type { AttachmentKind } from '../channel/port.ts';
import { ATTACHMENT_LIMIT_KEYS, type AttachmentLimits } from '../limits.ts';
import { SUPPORTED_DOCUMENTS } from './detect.ts';

export const SUPPORTED = `I can read ${SUPPORTED_DOCUMENTS}, photos (with a vision model), voice notes and audio (with a transcription endpoint), and forwarded or quoted messages.`;

export const TRANSCRIPTION_HOWTO =
  'I cannot listen to voice notes yet: set transcription.base_url and transcription.model in the config (any OpenAI-compatible /v1/audio/transcriptions server: whisper.cpp, faster-whisper-server, LocalAI, or a cloud API with STEWARD_TRANSCRIPTION_API_KEY).';

export const NO_VISION =
  "This model does not take images, so I cannot see the photo: mark a model that does with vision: true (model.vision, or vision on the route's entry under routes).";

/** The limit that applies to a kind, and the config key that names it. */
export function limitFor(
  kind: AttachmentKind,
  limits: AttachmentLimits,
): { bytes: number; key: (typeof ATTACHMENT_LIMIT_KEYS)[keyof typeof ATTACHMENT_LIMIT_KEYS] } {
  switch (kind) {
    case 'document':
      return { bytes: limits.documentBytes, key: ATTACHMENT_LIMIT_KEYS.documentBytes };
    case 'photo':
      return { bytes: limits.photoBytes, key: ATTACHMENT_LIMIT_KEYS.photoBytes };
    case 'voice':
    case 'audio':
      return { bytes: limits.audioBytes, key: ATTACHMENT_LIMIT_KEYS.audioBytes };
  }
}

/** 1536 → "1.5 KB"; decimal units, as phones show file sizes. */
export function formatSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} bytes`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value >= 100 ? Math.round(value) : Number(value.toFixed(1))} ${units[unit]}`;
}

export function tooLargeLine(
  what: string,
  limit: { bytes: number; key: string },
  seen: number | undefined,
  platformLimit?: string,
): string {
  const size = seen === undefined ? 'too large' : `${formatSize(seen)}`;
  if (platformLimit) return `Not read: ${what} is ${size}; ${platformLimit}. Send a smaller file.`;
  return `Not read: ${what} is ${size}, over the ${formatSize(limit.bytes)} limit (${limit.key}). Send a smaller file, or raise ${limit.key} in the config.`;
}

export function slowLine(what: string, limitMs: number): string {
  return `Not read: ${what}: the download took longer than ${limitMs / 1000} s, the time limit (${ATTACHMENT_LIMIT_KEYS.downloadTimeoutMs}). Try again, or raise ${ATTACHMENT_LIMIT_KEYS.downloadTimeoutMs} in the config.`;
}

/** How the owner would name one attachment in a sentence. */
export function describe(kind: AttachmentKind, name: string | undefined): string {
  switch (kind) {
    case 'document':
      return name ? `the file ${name}` : 'the file';
    case 'photo':
      return 'the photo';
    case 'voice':
      return 'the voice note';
    case 'audio':
      return name ? `the audio file ${name}` : 'the audio file';
  }
}
