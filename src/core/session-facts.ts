// What a session has established for good: it touched private data, untrusted text entered it,
// the owner named or approved these hosts, it loaded these indexed tools. Each is a union over the
// whole log, so a compaction writes them down and later turns read the log only from there.
import { loadedTools } from '../tools/builtin/load-tool.ts';
import { egressContext } from './egress-context.ts';
import { touchedSensitive } from './sensitive.ts';
import { type CarriedFacts, FACTS_VERSION, type SessionEvent } from './session-events.ts';

/** The facts of these events, including what an earlier compaction among them carried. Pure. */
export function carriedFacts(events: readonly SessionEvent[]): CarriedFacts {
  const egress = egressContext(events);
  return {
    version: FACTS_VERSION,
    sensitive: touchedSensitive(events),
    tainted: egress.tainted,
    knownHosts: [...egress.knownHosts].sort(),
    loadedTools: [...loadedTools(events)].sort(),
  };
}
