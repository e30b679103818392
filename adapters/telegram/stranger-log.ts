// Updates from anyone but the owner are dropped before they reach the core. They are logged, but
// at most once a minute per sender (with a count of what was dropped meanwhile), so a stranger
// cannot flood the log.
import type { Logger } from '../../src/log.ts';

export interface StrangerLog {
  /** `what` says what was dropped and why, e.g. "a message (not the owner)". */
  note(senderId: string, what: string): void;
}

const MAX_TRACKED = 1000;

export function strangerLog(log: Logger, windowMs = 60_000, now = () => Date.now()): StrangerLog {
  const seen = new Map<string, { until: number; dropped: number }>();
  return {
    note(senderId, what) {
      const t = now();
      const entry = seen.get(senderId);
      if (entry && entry.until > t) {
        entry.dropped++;
        return;
      }
      if (seen.size >= MAX_TRACKED) {
        for (const [key, value] of seen) if (value.until <= t) seen.delete(key);
        if (seen.size >= MAX_TRACKED) return;
      }
      const dropped = entry?.dropped ?? 0;
      seen.set(senderId, { until: t + windowMs, dropped: 0 });
      log.warn(
        { senderId, dropped },
        `telegram: ignored ${what} from ${senderId}${dropped > 0 ? ` (and ${dropped} more since the last note)` : ''}`,
      );
    },
  };
}
