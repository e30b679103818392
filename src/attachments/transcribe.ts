// Speech to text over the OpenAI-compatible `POST …/audio/transcriptions` (whisper.cpp's server,
// faster-whisper-server, LocalAI, OpenAI): multipart with the file and the model, JSON back.
// The endpoint is the operator's (config), never a URL from a message or the model. Its answer is
// read up to a bound and its text cut to one, whatever the server sends.
import { readCapped } from '../channel/capped-download.ts';
import { AttachmentTooLarge } from '../channel/port.ts';
import { ATTACHMENT_BOUNDS } from '../limits.ts';
import { isLoopbackUrl } from '../netguard/loopback-url.ts';

export interface TranscriptionConfig {
  /** The endpoint root ending in /v1, e.g. http://127.0.0.1:8080/v1. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** An ISO-639-1 hint, e.g. "de"; absent lets the server detect it. */
  language?: string;
}

export class TranscriptionFailed extends Error {
  override name = 'TranscriptionFailed';
}

export interface Transcriber {
  (audio: { bytes: Uint8Array; mime: string; name: string }, signal: AbortSignal): Promise<string>;
  /** The endpoint is on loopback: audio the owner marked sensitive may go there, and only there. */
  readonly onThisMachine: boolean;
}

const { transcriptBodyBytes, transcriptChars } = ATTACHMENT_BOUNDS;

export function transcriber(config: TranscriptionConfig): Transcriber {
  const url = `${config.baseUrl.replace(/\/+$/, '')}/audio/transcriptions`;
  const hear = async (audio: Parameters<Transcriber>[0], signal: AbortSignal) => {
    const form = new FormData();
    form.append('file', new Blob([audio.bytes], { type: audio.mime }), audio.name);
    form.append('model', config.model);
    form.append('response_format', 'json');
    if (config.language) form.append('language', config.language);
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        body: form,
        redirect: 'error',
        signal,
        headers: config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {},
      });
    } catch (error) {
      const name = (error as Error).name;
      throw new TranscriptionFailed(
        name === 'TimeoutError'
          ? 'the transcription endpoint did not answer in time'
          : `the transcription endpoint is unreachable (${name})`,
      );
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new TranscriptionFailed(`the transcription endpoint answered HTTP ${response.status}`);
    }
    let bytes: Uint8Array;
    try {
      bytes = await readCapped(response, transcriptBodyBytes);
    } catch (error) {
      throw new TranscriptionFailed(
        error instanceof AttachmentTooLarge
          ? `the transcription endpoint answered more than ${transcriptBodyBytes / 1024 / 1024} MB`
          : 'the transcription endpoint did not finish its answer in time',
      );
    }
    const body = Buffer.from(bytes).toString('utf8');
    let text: unknown;
    try {
      text = (JSON.parse(body) as { text?: unknown }).text;
    } catch {
      throw new TranscriptionFailed('the transcription endpoint answered something that is not JSON');
    }
    if (typeof text !== 'string')
      throw new TranscriptionFailed('the transcription endpoint answered without a text field');
    const said = text.trim();
    return said.length <= transcriptChars
      ? said
      : `${said.slice(0, transcriptChars)} … [transcript cut at ${transcriptChars} characters]`;
  };
  return Object.assign(hear, { onThisMachine: isLoopbackUrl(config.baseUrl) });
}
