// How both HTTP providers describe a failed request: one wording for the owner, whichever API.
import type { ProviderEvent } from './types.ts';

/** The readable part of an API error object. */
export function errorText(error: unknown): string {
  if (typeof error === 'string') return error;
  const message = (error as { message?: unknown })?.message;
  return typeof message === 'string' ? message : JSON.stringify(error).slice(0, 300);
}

/** The message of an error response body (JSON `error.message` or `message`, else the text). */
export async function readErrorBody(
  body: AsyncIterable<unknown> & { text(): Promise<string> },
): Promise<string> {
  let text = '';
  try {
    text = await body.text();
  } catch {
    return '';
  }
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown };
    if (parsed.error) return errorText(parsed.error);
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'the connection closed',
};

/** A failure below HTTP (connect, socket, timeout, abort) as a stream event. */
export function transportError(
  error: unknown,
  url: string,
  afterOutput: boolean,
  signal: AbortSignal | undefined,
): ProviderEvent {
  if (signal?.aborted) {
    return {
      type: 'error',
      kind: 'aborted',
      message: 'the request was cancelled',
      retryable: false,
      afterOutput,
    };
  }
  const e = error as { code?: string; cause?: { code?: string }; message?: string };
  const code = e.code ?? e.cause?.code ?? '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return {
      type: 'error',
      kind: 'timeout',
      message: `${url} did not answer in time`,
      retryable: !afterOutput,
      afterOutput,
    };
  }
  const reason = REASONS[code] ?? e.message ?? String(error);
  return {
    type: 'error',
    kind: 'unreachable',
    message: `cannot reach ${url}: ${reason}`,
    retryable: !afterOutput,
    afterOutput,
  };
}
