// Speech to text over the OpenAI-compatible `POST …/audio/transcriptions` (whisper.cpp's server,
// faster-whisper-server, LocalAI, OpenAI): multipart with the file and the model, JSON back.
// The endpoint is the operator's (config), never a URL from a message or the model.

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

export type Transcriber = (
  audio: { bytes: Uint8Array; mime: string; name: string },
  signal: AbortSignal,
) => Promise<string>;

export function transcriber(config: TranscriptionConfig): Transcriber {
  const url = `${config.baseUrl.replace(/\/+$/, '')}/audio/transcriptions`;
  return async (audio, signal) => {
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
    const body = await response.text();
    if (!response.ok)
      throw new TranscriptionFailed(`the transcription endpoint answered HTTP ${response.status}`);
    let text: unknown;
    try {
      text = (JSON.parse(body) as { text?: unknown }).text;
    } catch {
      throw new TranscriptionFailed('the transcription endpoint answered something that is not JSON');
    }
    if (typeof text !== 'string')
      throw new TranscriptionFailed('the transcription endpoint answered without a text field');
    return text.trim();
  };
}
