import type { Route } from '../gateway/router.ts';
import type { SessionEvent } from './session-events.ts';

/**
 * A session that ever ran a sensitive tool, or took in an attachment of a kind the config marks
 * sensitive, stays on the sensitive route: privacy is a property of the transcript, not of one
 * turn. Derived from the log (and what its compactions carried), so it holds across restarts.
 */
export function touchedSensitive(events: readonly SessionEvent[]): boolean {
  return events.some(({ data }) =>
    data.kind === 'compaction'
      ? data.carried?.sensitive === true
      : (data.kind === 'tool_started' || data.kind === 'user_message') && data.sensitive === true,
  );
}

/** The route of the next model call of this session: the sensitive one once it touched private data. */
export function routeFor(
  deps: { route: Route; sensitiveRoute?: Route | undefined },
  events: readonly SessionEvent[],
): Route {
  return deps.sensitiveRoute && touchedSensitive(events) ? deps.sensitiveRoute : deps.route;
}
