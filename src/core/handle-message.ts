// An inbound message becomes a turn: the owner check, repeats, commands, then the user message in
// the log before anything acts on it.
import { randomUUID } from 'node:crypto';
import type { HandleHooks, InboundMessage, ReplySink } from '../channel/port.ts';
import { answerCommand } from './commands.ts';
import { type Core, driveIn, isOwner, UNATTENDED_SENDER } from './core.ts';
import { resumeStranded } from './recovery.ts';
import { statusReport } from './status.ts';
import { takeAttachments } from './take-attachments.ts';
import type { TurnStatus } from './turn-types.ts';

export function handleMessage(
  core: Core,
  message: InboundMessage,
  sink: ReplySink,
  hooks?: HandleHooks,
): Promise<void> {
  let accepted = false;
  const accept = () => {
    if (accepted) return;
    accepted = true;
    hooks?.accepted?.();
  };
  if (!isOwner(core, message.channel, message.senderId)) {
    accept();
    core.log.info({ channel: message.channel }, 'ignored a message from someone other than the owner');
    return Promise.resolve();
  }
  // Answered outside the room's queue: it works while a turn runs there, and needs no model.
  if (/^\/status\s*$/.test(message.text.trim())) {
    accept();
    return statusReport(core).then(async (text) => {
      await sink({ type: 'reply', text });
    });
  }
  const work = core.runner.inRoom(message.channel, message.room, (signal) =>
    takeMessage(core, message, sink, accept, signal),
  );
  // Commands and repeats need no log entry: accepted once done. A failure before the message was
  // logged is not accepted, so the platform delivers it again. The channel just brought a message:
  // replies it could not deliver earlier go out now.
  return work.then(() => {
    accept();
    core.late.nudge(message.channel);
  });
}

async function takeMessage(
  core: Core,
  message: InboundMessage,
  sink: ReplySink,
  accept: () => void,
  signal: AbortSignal,
): Promise<void> {
  const { channel, room } = message;
  const { sessions } = core;
  if (message.id !== undefined && (await sessions.seenInbound(channel, room, message.id))) {
    core.log.info({ channel }, 'skipped a message delivered again after a restart');
    return;
  }
  const text = message.text.trim();
  const answer = await answerCommand(message.text, {
    db: core.db,
    sessions,
    grants: core.grants,
    now: core.now(),
    channel,
    room,
    ...(core.toolsReport ? { toolsReport: core.toolsReport } : {}),
  });
  if (answer !== undefined) {
    await sink({ type: 'reply', text: answer });
    return;
  }
  if (/^\/digest(\s|$)/.test(text)) {
    const digest = await core.digestCommand?.(text, { channel, room });
    await sink({ type: 'reply', text: digest ?? 'Scheduled digests are not available here.' });
    return;
  }
  if (/^\/budget(\s|$)/.test(text)) {
    await sink({ type: 'reply', text: await core.budget.command(text.split(/\s+/).slice(1)) });
    return;
  }
  // At a spend cap a new turn gets one line and no model call; the message needs no log entry.
  const refused = await core.budget.refusal();
  if (refused !== undefined) {
    await sink({ type: 'reply', text: refused });
    return;
  }
  const research = /^\/research\s/.test(text);
  const body = research ? text.replace(/^\/research\s+/, '') : message.text;
  const session = await sessions.open(channel, room);
  await resumeStranded(core, session, sink, signal);
  const taken = await takeAttachments(core, session, { ...message, text: body }, sink, signal);
  if (taken === undefined) return;
  const dropped = await core.loop.approvals.supersede(session.id);
  if (dropped > 0) {
    await sink({
      type: 'notice',
      level: 'info',
      text: 'The earlier question was dropped: you sent a new message.',
    });
  }
  const turnId = randomUUID();
  await sessions.append(
    session.id,
    {
      kind: 'user_message',
      text: taken.text,
      sender: message.senderId,
      ...(taken.attachments ? { attachments: taken.attachments } : {}),
      ...(taken.sensitive ? { sensitive: true } : {}),
      ...(research ? { research } : {}),
      ...(message.id !== undefined ? { inboundId: message.id } : {}),
    },
    turnId,
  );
  accept();
  await driveOrTell(core, session, turnId, sink, signal);
}

async function driveOrTell(
  core: Core,
  session: Parameters<typeof driveIn>[1],
  turnId: string,
  sink: ReplySink,
  signal: AbortSignal,
): Promise<void> {
  try {
    await driveIn(core, session, turnId, sink, { unattended: false }, signal);
  } catch (error) {
    // The message is in the log and the platform was told so: failing here would only make it
    // deliver the message again. The turn stays open and the sweeper resumes it once it can.
    const reason = (error as Error).message.split('\n')[0];
    core.log.error({ sessionId: session.id }, `a turn failed: ${reason}`);
    await Promise.resolve(
      sink({
        type: 'notice',
        level: 'error',
        text: `Could not finish this turn (${reason}); your message is kept and the turn resumes once steward can carry on.`,
      }),
    ).catch(() => {});
  }
}

/** `turnId`: chosen by the caller when it records the turn before it begins (a digest run does). */
export interface UnattendedInput {
  channel: string;
  room: string;
  text: string;
  turnId?: string;
}

export async function runUnattended(
  core: Core,
  input: UnattendedInput,
  sink: ReplySink,
): Promise<TurnStatus> {
  return core.runner.inRoom(input.channel, input.room, async (signal) => {
    // A digest at a spend cap pauses: it says why, and the next fire runs once the cap allows.
    const refused = await core.budget.refusal();
    if (refused !== undefined) {
      await sink({ type: 'notice', level: 'error', text: `paused: ${refused}` });
      return 'failed';
    }
    const session = await core.sessions.startFresh(input.channel, input.room);
    const turnId = input.turnId ?? randomUUID();
    await core.sessions.append(
      session.id,
      { kind: 'user_message', text: input.text, sender: UNATTENDED_SENDER },
      turnId,
    );
    return driveIn(core, session, turnId, sink, { unattended: true }, signal);
  });
}
