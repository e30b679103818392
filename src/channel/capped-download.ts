// The one way a channel fetches an owner's file from its platform: a GET to a URL the adapter built
// from its configured root, no redirects, and a byte cap enforced on the announced length and again
// on every piece that arrives, so a lying server cannot make steward hold more than the cap.
import { AttachmentTooLarge } from './port.ts';

/** Why a download failed, without the URL (it may hold a bot token). */
export class DownloadFailed extends Error {
  override name = 'DownloadFailed';
}

export async function fetchCapped(
  url: string,
  init: { headers?: Record<string, string>; signal?: AbortSignal | undefined },
  maxBytes: number,
): Promise<Uint8Array> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: init.headers ?? {},
      redirect: 'error',
      ...(init.signal ? { signal: init.signal } : {}),
    });
  } catch (error) {
    throw new DownloadFailed(`the download did not connect (${(error as Error).name})`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new DownloadFailed(`the download was refused (HTTP ${response.status})`);
  }
  const announced = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(announced) && announced > maxBytes) {
    await response.body?.cancel();
    throw new AttachmentTooLarge(maxBytes, announced);
  }
  return readCapped(response, maxBytes);
}

/** A response body, stopped with `AttachmentTooLarge` as soon as more than `maxBytes` arrive. */
export async function readCapped(response: Response, maxBytes: number): Promise<Uint8Array> {
  const pieces: Uint8Array[] = [];
  let total = 0;
  if (response.body) {
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel();
        throw new AttachmentTooLarge(maxBytes, total);
      }
      pieces.push(value);
    }
  }
  return Buffer.concat(pieces, total);
}
