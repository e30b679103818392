import type { request } from 'undici';
import { readErrorBody, transportError } from './http-errors.ts';
import { createSseParser } from './sse.ts';
import type { ProviderEvent } from './types.ts';

export interface EventStreamOptions {
  url: string;
  signal?: AbortSignal | undefined;
  /** Events for one SSE payload; may throw on a malformed one (it becomes a protocol error). */
  interpret(payload: string): ProviderEvent[];
  /** The provider saw its end marker ([DONE], message_stop). */
  finished(): boolean;
  afterOutput(): boolean;
  /** What one payload is called in messages: "stream chunk", "stream event". */
  unit: string;
}

/**
 * Reads an SSE body into provider events, for both HTTP providers. Never throws; returns true when
 * it already yielded the stream's terminal error, so the caller adds nothing after it.
 */
export async function* readEventStream(
  body: AsyncIterable<unknown>,
  opts: EventStreamOptions,
): AsyncGenerator<ProviderEvent, boolean> {
  const { url, signal } = opts;
  const parser = createSseParser();
  const decoder = new TextDecoder();
  const protocolError = (message: string): ProviderEvent => ({
    type: 'error',
    kind: 'protocol',
    message,
    retryable: false,
    afterOutput: opts.afterOutput(),
  });
  /** Events for a batch of payloads; stops at the first error and at the end marker. */
  const handle = (payloads: string[]): ProviderEvent[] => {
    const events: ProviderEvent[] = [];
    for (const payload of payloads) {
      try {
        events.push(...opts.interpret(payload));
      } catch (error) {
        events.push(protocolError(`${url} sent a malformed ${opts.unit}: ${(error as Error).message}`));
      }
      if (opts.finished() || events.at(-1)?.type === 'error') break;
    }
    return events;
  };

  // Only the transport may fail inside this loop: malformed payloads become events in `handle`.
  try {
    for await (const bytes of body) {
      for (const event of handle(parser.push(decoder.decode(bytes as Uint8Array, { stream: true })))) {
        // A cancelled request ends as cancelled, even if the rest of the reply was already buffered.
        if (signal?.aborted) {
          yield transportError(signal.reason, url, opts.afterOutput(), signal);
          return true;
        }
        yield event;
        if (event.type === 'error') return true;
      }
      // The end marker ends the reply even if the server keeps the connection open; leaving the
      // loop releases the body.
      if (opts.finished()) break;
    }
    if (!opts.finished()) {
      for (const event of handle([...parser.push(decoder.decode()), ...parser.end()])) {
        yield event;
        if (event.type === 'error') return true;
      }
    }
  } catch (error) {
    yield transportError(error, url, opts.afterOutput(), signal);
    return true;
  }
  if (signal?.aborted) {
    yield transportError(signal.reason, url, opts.afterOutput(), signal);
    return true;
  }
  return false;
}

/**
 * POSTs a JSON body and expects an event stream back. Resolves to the open body, or to the one
 * error event that ends the stream (connection failure, non-200 status, cancellation); never throws.
 */
export async function openEventStream(
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal | undefined,
): Promise<{ body: AsyncIterable<unknown> } | { error: ProviderEvent }> {
  let response: Awaited<ReturnType<typeof request>>;
  try {
    // undici (about 100 modules) loads with the first model request, not on the path to polling.
    const undici = await import('undici');
    response = await undici.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
      body,
      signal,
    });
  } catch (error) {
    return { error: transportError(error, url, false, signal) };
  }
  if (response.statusCode === 200) return { body: response.body };
  const detail = await readErrorBody(response.body);
  if (signal?.aborted) return { error: transportError(signal.reason, url, false, signal) };
  const status = response.statusCode;
  // 429 and every 5xx (Anthropic's 529 "overloaded" included) are worth another try.
  return {
    error: {
      type: 'error',
      kind: 'http',
      message: `${url} answered HTTP ${status}${detail ? `: ${detail}` : ''}`,
      status,
      retryable: status === 429 || status >= 500,
      afterOutput: false,
    },
  };
}
