// What the log says about egress: whether untrusted content entered the session, and which hosts
// the owner named or approved. Derived from the log alone (a compaction carries both forward),
// so it holds across restarts.
import { type EgressContext, fetchHost, hostsIn } from '../permissions/egress.ts';
import { approves } from '../permissions/vocabulary.ts';
import type { SessionEvent } from './session-events.ts';
import type { AskedEvent } from './turn-state.ts';

/** A digest's prompt is the owner's words too (they configured it), so its hosts count as named. */
export function egressContext(events: readonly SessionEvent[]): EgressContext {
  let tainted = false;
  const knownHosts = new Set<string>();
  const asked = new Map<string, AskedEvent>();
  for (const { data } of events) {
    switch (data.kind) {
      case 'user_message':
        for (const host of hostsIn(data.text)) knownHosts.add(host);
        // A fenced document or quote is an outsider's words, even though the owner passed it on.
        if (data.attachments?.some((a) => a.kind === 'document' || a.kind === 'quote')) tainted = true;
        break;
      case 'tool_result':
        if (data.untrusted) tainted = true;
        break;
      case 'compaction':
        if (data.carried?.tainted) tainted = true;
        for (const host of data.carried?.knownHosts ?? []) knownHosts.add(host);
        break;
      case 'permission_requested':
        asked.set(data.requestId, data);
        break;
      case 'permission_decision': {
        const request = asked.get(data.requestId);
        if (request?.args && approves(data.decision))
          for (const host of callHosts(request)) knownHosts.add(host);
        break;
      }
      default:
        break;
    }
  }
  return { tainted, knownHosts };
}

/** The hosts an approved call reached: its URL, or every host its command names. */
function callHosts(request: AskedEvent): string[] {
  const args = request.args ?? {};
  if (typeof args.command === 'string') return hostsIn(args.command);
  const fetched = fetchHost(args);
  return fetched ? [fetched] : hostsIn(JSON.stringify(args));
}
