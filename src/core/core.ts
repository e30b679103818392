// What the parts of the core share: built once by createAssistant, passed to each part.
import type { AttachmentDeps } from '../attachments/ingest.ts';
import type { ReplySink } from '../channel/port.ts';
import type { Logger } from '../log.ts';
import type { GrantStore } from '../permissions/gate.ts';
import type { Db } from '../store/db.ts';
import type { PermissionRequests } from '../store/permission-requests.ts';
import type { Session, SessionLog } from '../store/session-log.ts';
import { driveTurn } from './agent-loop.ts';
import type { Budget } from './budget.ts';
import type { TurnRunner } from './turn-runner.ts';
import type { LoopDeps, TurnStatus } from './turn-types.ts';

export interface Core {
  db: Db;
  log: Logger;
  now: () => Date;
  owners: Readonly<Record<string, string>>;
  sessions: SessionLog;
  requests: PermissionRequests;
  grants: GrantStore;
  loop: LoopDeps;
  /** The loop's dependencies for one drive: usage recorded against the session, budget notices to `notice`. */
  loopFor(session: Session, turn: { unattended: boolean; notice(text: string): Promise<void> }): LoopDeps;
  runner: TurnRunner;
  /** Turns being driven now, so recovery never drives one twice at once. */
  driving: Set<string>;
  budget: Budget;
  /** Tells the owner in their private room; set by `start` (until then, only logged). */
  owner: { notify(text: string): Promise<void> };
  /** Posts a channel's undelivered replies soon (the channel just worked); set by `start`. */
  late: { nudge(channel: string): void };
  version: string;
  startedAt: Date;
  /** Lines the composition root adds to /status (channels, digests); set by `start`. */
  statusLines(): Promise<string[]>;
  digestCommand?: (text: string, from: { channel: string; room: string }) => Promise<string | undefined>;
  /** Lines for /tools about what is connected. */
  toolsReport?: () => string[];
  /** How documents, photos, voice and quotes the owner sends are taken in. */
  attachments: AttachmentDeps;
}

/** The sender of an unattended turn's message (a scheduled digest): no owner is there to ask. */
export const UNATTENDED_SENDER = 'steward';

/** How a turn is driven: unattended (a digest), and whether a restart or a failure cut it off before. */
export interface DriveMode {
  unattended: boolean;
  recovered?: boolean;
}

/** Drives a turn of the session; the caller is already inside the session's room queue. */
export function driveIn(
  core: Core,
  session: Session,
  turnId: string,
  sink: ReplySink,
  how: DriveMode,
  signal: AbortSignal,
): Promise<TurnStatus> {
  const { unattended } = how;
  // A digest's sink posts to its target room: notices for the owner go to the owner's room instead.
  const notice = unattended
    ? (text: string) => core.owner.notify(text)
    : async (text: string) => {
        await sink({ type: 'notice', level: 'info', text });
      };
  core.driving.add(turnId);
  return driveTurn(core.loopFor(session, { unattended, notice }), {
    session,
    turnId,
    sink,
    unattended,
    recovered: how.recovered === true,
    signal,
  }).finally(() => core.driving.delete(turnId));
}

/** Queues a turn in its room and drives it there. */
export function driveQueued(
  core: Core,
  session: Session,
  turnId: string,
  sink: ReplySink,
  unattended = false,
): Promise<TurnStatus> {
  return core.runner.inRoom(session.channel, session.room, (signal) =>
    driveIn(core, session, turnId, sink, { unattended }, signal),
  );
}

/** Where the core posts without an inbound message; undefined for a room no channel reaches. */
export type Outbox = (channel: string, room: string) => ReplySink | undefined;

export const isOwner = (core: Core, channel: string, senderId: string) => core.owners[channel] === senderId;
