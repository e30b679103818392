// The attachment step of an inbound message, inside the room's queue and after the owner check:
// the sensitive rule first (before anything is fetched), then the fetch and the reading.
import { hasAttachments, ingest, kindsIn } from '../attachments/ingest.ts';
import { SUPPORTED } from '../attachments/lines.ts';
import type { InboundMessage, ReplySink } from '../channel/port.ts';
import type { Session } from '../store/session-log.ts';
import type { Core } from './core.ts';
import { routeFor } from './sensitive.ts';
import type { AttachmentRecord } from './session-events.ts';

export interface Taken {
  text: string;
  attachments?: AttachmentRecord[];
  sensitive?: boolean;
}

/** What the message brings to the log; undefined when the owner was answered and nothing is left. */
export async function takeAttachments(
  core: Core,
  session: Session,
  message: InboundMessage,
  sink: ReplySink,
  signal: AbortSignal,
): Promise<Taken | undefined> {
  if (!hasAttachments(message)) return { text: message.text };
  const deps = core.attachments;
  const marked = kindsIn(message).filter((k) => deps.sensitive.includes(k));
  const sensitiveRoute = core.loop.sensitiveRoute;
  if (marked.length > 0 && !sensitiveRoute) {
    await sink({
      type: 'reply',
      text: `Not read: ${marked[0]} attachments are marked sensitive (attachments.sensitive) and no sensitive_tool_route is configured; add one, or remove ${marked[0]} from attachments.sensitive.`,
    });
    return undefined;
  }
  // Audio marked sensitive is heard only by a speech server on this machine: sending it to a
  // cloud endpoint would break the promise the sensitive route keeps for text.
  const audible = marked.find((k) => k === 'voice' || k === 'audio');
  if (audible && deps.transcribe && !deps.transcribe.onThisMachine) {
    await sink({
      type: 'reply',
      text: `Not read: ${audible} attachments are marked sensitive (attachments.sensitive) and transcription.base_url is not on this machine; point it at a speech server on loopback, or remove ${audible} from attachments.sensitive.`,
    });
    return undefined;
  }
  const sensitive = marked.length > 0;
  let vision = false;
  if (message.attachments?.some((a) => a.kind === 'photo')) {
    const route =
      sensitive && sensitiveRoute
        ? sensitiveRoute
        : routeFor(core.loop, await core.sessions.recent(session.id));
    vision = route.entries[0]?.vision === true;
  }
  const taken = await ingest(deps, { sessionId: session.id, sink, signal, vision }, message);
  if (taken.text.trim() === '' && taken.records.length === 0) {
    await sink({ type: 'reply', text: taken.lines.length > 0 ? taken.lines.join('\n') : SUPPORTED });
    return undefined;
  }
  for (const line of taken.lines) await sink({ type: 'notice', level: 'info', text: line });
  return {
    text: taken.text,
    ...(taken.records.length > 0 ? { attachments: taken.records } : {}),
    ...(sensitive ? { sensitive } : {}),
  };
}
