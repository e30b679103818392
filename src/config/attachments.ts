// `attachments:` (size caps, sensitive kinds) and `transcription:` (the speech-to-text endpoint).
import type { TranscriptionConfig } from '../attachments/transcribe.ts';
import { ConfigError } from '../errors.ts';
import { type AttachmentLimits, DEFAULT_ATTACHMENT_LIMITS as D } from '../limits.ts';
import type { Env } from './load.ts';

/** What the config can mark sensitive: a kind of attachment, or a passed-on message. */
export const SENSITIVE_KINDS = ['document', 'photo', 'voice', 'audio', 'forward'] as const;
export type SensitiveKind = (typeof SENSITIVE_KINDS)[number];

export interface AttachmentsConfig {
  limits: AttachmentLimits;
  /** Kinds that pin the session to sensitive_tool_route, like a sensitive tool. */
  sensitive: SensitiveKind[];
  transcription?: TranscriptionConfig;
}

export interface AttachmentsSection {
  attachments?: {
    max_document_bytes?: number;
    max_photo_bytes?: number;
    max_audio_bytes?: number;
    pdf_max_pages?: number;
    download_timeout_s?: number;
    sensitive?: SensitiveKind[];
  };
  transcription?: { base_url: string; model: string; language?: string; timeout_s?: number };
  sensitive_tool_route?: string;
}

const bytes = { type: 'integer', minimum: 1024, maximum: 2 * 1024 * 1024 * 1024 } as const;

export const attachmentsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    max_document_bytes: bytes,
    max_photo_bytes: bytes,
    max_audio_bytes: bytes,
    pdf_max_pages: { type: 'integer', minimum: 1, maximum: 10_000 },
    download_timeout_s: { type: 'number', exclusiveMinimum: 0, maximum: 3600 },
    sensitive: { type: 'array', uniqueItems: true, items: { type: 'string', enum: SENSITIVE_KINDS } },
  },
} as const;

export const transcriptionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['base_url', 'model'],
  properties: {
    base_url: { type: 'string', minLength: 1 },
    model: { type: 'string', minLength: 1 },
    language: { type: 'string', pattern: '^[a-z]{2,3}$' },
    timeout_s: { type: 'number', exclusiveMinimum: 0, maximum: 3600 },
  },
} as const;

export const ATTACHMENT_FIX_HINTS: Readonly<Record<string, string>> = {
  attachments:
    'give max_document_bytes, max_photo_bytes, max_audio_bytes, pdf_max_pages, download_timeout_s, sensitive',
  'attachments.max_document_bytes': 'use bytes from 1024, e.g. 20971520 (20 MB)',
  'attachments.max_photo_bytes': 'use bytes from 1024, e.g. 10485760 (10 MB)',
  'attachments.max_audio_bytes': 'use bytes from 1024, e.g. 20971520 (20 MB)',
  'attachments.pdf_max_pages': 'use a page count, e.g. 300',
  'attachments.download_timeout_s': 'use seconds, e.g. 120',
  'attachments.sensitive': `list kinds from ${SENSITIVE_KINDS.join(', ')}, e.g. [document]`,
  transcription: 'give {base_url, model}: an OpenAI-compatible endpoint ending in /v1 and its speech model',
  'transcription.base_url': 'give the endpoint ending in /v1, e.g. http://127.0.0.1:8080/v1',
  'transcription.model': 'name the speech model, e.g. whisper-1',
  'transcription.language': 'use an ISO 639-1 code, e.g. en',
  'transcription.timeout_s': 'use seconds, e.g. 120',
};

export function resolveAttachments(
  tree: AttachmentsSection,
  env: Env,
  where: (key: string) => string,
  checkUrl: (value: string, key: string) => void,
): AttachmentsConfig {
  const a = tree.attachments ?? {};
  const sensitive = a.sensitive ?? [];
  if (sensitive.length > 0 && !tree.sensitive_tool_route) {
    throw new ConfigError(
      `config: ${where('attachments.sensitive')} marks attachments sensitive but sensitive_tool_route is not set; name a route with a local model there, or remove attachments.sensitive`,
    );
  }
  const t = tree.transcription;
  const config: AttachmentsConfig = {
    limits: {
      documentBytes: a.max_document_bytes ?? D.documentBytes,
      photoBytes: a.max_photo_bytes ?? D.photoBytes,
      audioBytes: a.max_audio_bytes ?? D.audioBytes,
      pdfPages: a.pdf_max_pages ?? D.pdfPages,
      transcriptionTimeoutMs: t?.timeout_s === undefined ? D.transcriptionTimeoutMs : t.timeout_s * 1000,
      downloadTimeoutMs:
        a.download_timeout_s === undefined ? D.downloadTimeoutMs : a.download_timeout_s * 1000,
    },
    sensitive,
  };
  if (t) {
    checkUrl(t.base_url, 'transcription.base_url');
    const apiKey = env.STEWARD_TRANSCRIPTION_API_KEY;
    config.transcription = {
      baseUrl: t.base_url.replace(/\/+$/, ''),
      model: t.model,
      ...(apiKey ? { apiKey } : {}),
      ...(t.language ? { language: t.language } : {}),
    };
  }
  return config;
}
