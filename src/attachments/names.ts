// A name someone else chose (a file name, a forward's origin) as it may appear in a fence source:
// on one line, without invisible or control characters, no forged fence marker, and short.
// Pure. Names reach the model only inside the fence's escaped source attribute.
import { ATTACHMENT_BOUNDS } from '../limits.ts';
import { neutralizeMarkers } from '../trust/fence.ts';

const UNSEEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\s]+/gu;

export function sourceName(raw: string | undefined, fallback: string): string {
  const flat = (raw ?? '').replace(UNSEEN, ' ').trim();
  const points = [...flat];
  const cut =
    points.length > ATTACHMENT_BOUNDS.nameChars
      ? `${points.slice(0, ATTACHMENT_BOUNDS.nameChars - 1).join('')}…`
      : flat;
  return neutralizeMarkers(cut === '' ? fallback : cut);
}
