// A message's attachments become what the log keeps: documents as fenced text (large ones as a
// fenced digest with a ref), photos stored by ref, voice as the owner's transcribed words, quotes
// fenced with their origin. Everything is fetched only here, after the owner check, from the
// channel's own download. Problems become one line each for the owner; nothing here throws.
import {
  AttachmentTooLarge,
  type InboundAttachment,
  type InboundMessage,
  type ReplySink,
} from '../channel/port.ts';
import type { SensitiveKind } from '../config/attachments.ts';
import type { AttachmentRecord } from '../core/session-events.ts';
import type { AttachmentLimits } from '../limits.ts';
import type { Logger } from '../log.ts';
import type { OutputStore } from '../offload/output-store.ts';
import { fence } from '../trust/fence.ts';
import { readDocument } from './document.ts';
import { imageMime, storeImage } from './images.ts';
import {
  describe,
  limitFor,
  NO_VISION,
  SUPPORTED,
  slowLine,
  TRANSCRIPTION_HOWTO,
  tooLargeLine,
} from './lines.ts';
import { sourceName } from './names.ts';
import type { Transcriber } from './transcribe.ts';

export interface AttachmentDeps {
  limits: AttachmentLimits;
  /** Kinds that pin the session to the sensitive route. */
  sensitive: readonly SensitiveKind[];
  transcribe?: Transcriber;
  outputs: OutputStore;
  /** Untrusted text larger than this (bytes) reaches the model as a digest with a ref. */
  offloadBytes: number;
  log: Logger;
}

export interface IngestContext {
  sessionId: string;
  sink: ReplySink;
  signal: AbortSignal;
  /** Whether the model this message goes to takes images. */
  vision: boolean;
}

export interface Ingested {
  /** The owner's words: the text, or a transcript with the text after it. */
  text: string;
  records: AttachmentRecord[];
  /** Lines for the owner: what could not be read, and why. */
  lines: string[];
}

/** The kinds in a message the config could mark sensitive. */
export function kindsIn(message: InboundMessage): SensitiveKind[] {
  const kinds: SensitiveKind[] = (message.attachments ?? []).map((a) => a.kind);
  if (message.quote) kinds.push('forward');
  return kinds;
}

export const hasAttachments = (m: InboundMessage) =>
  (m.attachments?.length ?? 0) > 0 || m.quote !== undefined || m.unsupported !== undefined;

export async function ingest(
  deps: AttachmentDeps,
  ctx: IngestContext,
  message: InboundMessage,
): Promise<Ingested> {
  const out: Ingested = { text: message.text, records: [], lines: [] };
  if (message.unsupported) out.lines.push(`I cannot read ${message.unsupported}. ${SUPPORTED}`);
  if (message.quote) {
    const { text } = message.quote;
    // A display name is chosen by whoever made it: it reaches the model only as a fence source.
    const origin = sourceName(message.quote.origin, 'someone else');
    out.records.push({ kind: 'quote', origin, content: await untrusted(deps, ctx, text, origin) });
  }
  for (const attachment of message.attachments ?? []) {
    try {
      await take(deps, ctx, attachment, out);
    } catch (error) {
      out.lines.push(failureLine(deps, attachment, error));
    }
  }
  return out;
}

async function take(deps: AttachmentDeps, ctx: IngestContext, a: InboundAttachment, out: Ingested) {
  if (a.kind === 'photo' && !ctx.vision) {
    out.lines.push(NO_VISION);
    return;
  }
  if ((a.kind === 'voice' || a.kind === 'audio') && !deps.transcribe) {
    out.lines.push(TRANSCRIPTION_HOWTO);
    return;
  }
  const limit = limitFor(a.kind, deps.limits);
  if (a.size !== undefined && a.size > limit.bytes) throw new AttachmentTooLarge(limit.bytes, a.size);
  const bytes = await downloadInTime(deps, ctx, a, limit.bytes);
  const forwarded = a.from !== undefined ? { forwarded: true as const } : {};
  switch (a.kind) {
    case 'document': {
      const name = sourceName(a.name, 'unnamed file');
      const read = await readDocument(bytes, name, a.mime, deps.limits.pdfPages);
      if (!read.ok) {
        out.lines.push(`Not read: ${name}: ${read.why}. ${SUPPORTED}`);
        return;
      }
      const stored = await deps.outputs.write(
        { sessionId: ctx.sessionId, tool: name, trusted: false },
        read.text,
      );
      const small = Buffer.byteLength(read.text) <= deps.offloadBytes;
      if (!small) await offloaded(ctx, stored, name);
      const content = fence(small ? read.text : stored.digest, name);
      out.records.push({
        kind: 'document',
        name,
        ref: stored.ref,
        bytes: bytes.length,
        content,
        ...read.note,
        ...forwarded,
      });
      return;
    }
    case 'photo': {
      const mime = imageMime(bytes);
      if (!mime) {
        out.lines.push('Not shown: the photo is not a JPEG, PNG, GIF or WebP image.');
        return;
      }
      out.records.push({ ...(await storeImage(deps.outputs, ctx.sessionId, bytes, mime)), ...forwarded });
      return;
    }
    case 'voice':
    case 'audio':
      await hear(deps, ctx, a, bytes, out);
      return;
  }
}

async function hear(
  deps: AttachmentDeps,
  ctx: IngestContext,
  a: InboundAttachment,
  bytes: Uint8Array,
  out: Ingested,
) {
  const mime = a.mime ?? (a.kind === 'voice' ? 'audio/ogg' : 'application/octet-stream');
  const name = a.name ?? (a.kind === 'voice' ? 'voice.ogg' : 'audio');
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(deps.limits.transcriptionTimeoutMs)]);
  const transcript = await (deps.transcribe as Transcriber)({ bytes, mime, name }, signal);
  if (transcript === '') {
    out.lines.push(`I heard nothing I could transcribe in ${describe(a.kind, a.name)}.`);
    return;
  }
  if (a.from !== undefined) {
    // A forwarded voice note holds someone else's voice: fenced with its origin, like a quote.
    const origin = sourceName(
      `${a.from}, ${a.kind === 'voice' ? 'a voice note' : 'an audio file'}`,
      'someone else',
    );
    await ctx.sink({ type: 'notice', level: 'info', text: `🎙 I heard (${origin}): ${transcript}` });
    out.records.push({ kind: 'quote', origin, content: await untrusted(deps, ctx, transcript, origin) });
    return;
  }
  // Shown back, so the owner sees what the model will take as their words.
  await ctx.sink({ type: 'notice', level: 'info', text: `🎙 I heard: ${transcript}` });
  out.text = out.text.trim() === '' ? transcript : `${transcript}\n\n${out.text}`;
  out.records.push({
    kind: 'transcript',
    from: a.kind === 'voice' ? 'voice' : 'audio',
    ...(a.durationS !== undefined ? { seconds: a.durationS } : {}),
  });
}

/** A platform that stalls is given up at the download time limit, named as such. */
async function downloadInTime(deps: AttachmentDeps, ctx: IngestContext, a: InboundAttachment, max: number) {
  const timeout = AbortSignal.timeout(deps.limits.downloadTimeoutMs);
  try {
    return await a.download(max, AbortSignal.any([ctx.signal, timeout]));
  } catch (error) {
    if (timeout.aborted && !ctx.signal.aborted) throw new DownloadTimedOut();
    throw error;
  }
}

class DownloadTimedOut extends Error {
  override name = 'DownloadTimedOut';
}

/** Text from outside, fenced; past the offload threshold, stored and replaced by its digest. */
async function untrusted(deps: AttachmentDeps, ctx: IngestContext, text: string, source: string) {
  if (Buffer.byteLength(text) <= deps.offloadBytes) return fence(text, source);
  const stored = await deps.outputs.write({ sessionId: ctx.sessionId, tool: source, trusted: false }, text);
  await offloaded(ctx, stored, source);
  return fence(stored.digest, source);
}

async function offloaded(
  ctx: IngestContext,
  stored: { ref: string; bytes: number; lines: number },
  tool: string,
) {
  await ctx.sink({
    type: 'output_offloaded',
    ref: stored.ref,
    tool,
    bytes: stored.bytes,
    lines: stored.lines,
  });
}

function failureLine(deps: AttachmentDeps, a: InboundAttachment, error: unknown): string {
  const what = describe(a.kind, a.name === undefined ? undefined : sourceName(a.name, 'unnamed file'));
  if (error instanceof DownloadTimedOut) return slowLine(what, deps.limits.downloadTimeoutMs);
  if (error instanceof AttachmentTooLarge)
    return tooLargeLine(what, limitFor(a.kind, deps.limits), error.bytes, error.platformLimit);
  const reason = error instanceof Error ? error.message : String(error);
  deps.log.warn({ kind: a.kind }, `could not take in an attachment: ${reason}`);
  return `Not read: ${what}: ${reason}.`;
}
