// What the parts of the core share: built once by createAssistant, passed to each part.
import type { ReplySink } from '../channel/port.ts';
import type { Logger } from '../log.ts';
import type { GrantStore } from '../permissions/gate.ts';
import type { Db } from '../store/db.ts';
import type { PermissionRequests } from '../store/permission-requests.ts';
import type { Session, SessionLog } from '../store/session-log.ts';
import { driveTurn } from './agent-loop.ts';
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
  loopFor(session: Session): LoopDeps;
  runner: TurnRunner;
  digestCommand?: (text: string, from: { channel: string; room: string }) => Promise<string | undefined>;
}

/** The sender of an unattended turn's message (a scheduled digest): no owner is there to ask. */
export const UNATTENDED_SENDER = 'steward';

/** Drives a turn of the session; the caller is already inside the session's room queue. */
export function driveIn(
  core: Core,
  session: Session,
  turnId: string,
  sink: ReplySink,
  unattended: boolean,
  signal: AbortSignal,
): Promise<TurnStatus> {
  return driveTurn(core.loopFor(session), { session, turnId, sink, unattended, signal });
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
    driveIn(core, session, turnId, sink, unattended, signal),
  );
}

/** Where the core posts without an inbound message; undefined for a room no channel reaches. */
export type Outbox = (channel: string, room: string) => ReplySink | undefined;

export const isOwner = (core: Core, channel: string, senderId: string) => core.owners[channel] === senderId;
