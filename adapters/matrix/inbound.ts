// Events from a sync batch, turned into calls on the assistant. Only the owner is heard: invites
// from anyone else are declined, their messages and reactions dropped before any work. Events of
// one room are taken in order; each lane hands its work to the assistant and moves on, so a long
// turn in one room never holds up the sync.
import type { ChannelPort, InboundMessage, PermissionDecision, ReplySink } from '../../src/channel/port.ts';
import type { Logger } from '../../src/log.ts';
import {
  decisionFromReaction,
  decisionFromText,
  MATRIX_HELP,
  outputCommand,
  stripReplyFallback,
  translateCommand,
} from './commands.ts';
import { classifyDirectInvite, type PrivateRoom } from './direct-room.ts';
import type { E2eeStatus } from './load-sdk.ts';
import type { MatrixOps } from './matrix-ops.ts';
import { type MediaSource, mediaOf } from './media.ts';
import { decidedContent, outcomeLine } from './prompt-text.ts';
import { quotedReply } from './quoted-reply.ts';
import type { MatrixStateStore, StoredPrompt } from './state-store.ts';
import type { MatrixEvent } from './sync-loop.ts';
import { type RendererDeps, sendOutputFile } from './turn-renderer.ts';
import { typingWhile } from './typing-notices.ts';

export const MATRIX_CHANNEL = 'matrix';

export interface InboundDeps {
  assistant: ChannelPort;
  owner: string;
  /** The bot's own user id. */
  botId: string;
  privateRoom: PrivateRoom;
  e2ee: E2eeStatus;
  /** The bot decrypts (its crypto is running), not just that the library loaded. */
  decrypts: boolean;
  /** The bot's device, for the owner to verify, when its crypto runs. */
  device: { id: string; ed25519: string } | undefined;
  ops: MatrixOps;
  /** Where the owner's files are downloaded from: the homeserver's authenticated media API. */
  media: MediaSource;
  state: MatrixStateStore;
  log: Logger;
  sinkFor(room: string): ReplySink;
  readOutput: RendererDeps['readOutput'];
  /** Resolves when prompts being posted are stored, so a quick reaction finds its prompt. */
  promptsPosted(): Promise<void>;
  typingEveryMs: number;
}

/** An event handed on: `taken` settles once it is safe to confirm to the homeserver. */
export interface Taken {
  taken: Promise<void>;
}

/** Work started once an event's turn in its room comes; `accept` says the event is safely taken. */
type Start = (accept: () => void) => Promise<unknown>;

/**
 * A reply of the channel's own (a file, a notice): the event is taken before it is sent, so a send
 * that keeps failing is logged and not fetched again and again.
 */
const plain =
  (work: () => Promise<unknown>): Start =>
  (accept) => {
    accept();
    return work();
  };

/**
 * Whether an owner's event that arrived in clear is acted on. Pure. In an encrypted room no client
 * sends a message in clear, so one that arrives so is ignored (only a homeserver could have made
 * it). Reactions are the exception: matrix-js-sdk, and so Element, sends m.reaction in clear even in
 * encrypted rooms, so requiring them encrypted would make ✅ unusable. Accepting one trusts the
 * homeserver as much as the encrypted path does: the bot does not verify the owner's devices, so
 * which devices are the owner's is the homeserver's word either way. Typed answers ("once",
 * "deny") in an encrypted room are encrypted, and always work.
 */
export function clearEventPolicy(event: {
  type: string;
  roomEncrypted: boolean;
  decrypted: boolean;
}): 'accept' | 'ignore' {
  if (event.decrypted || !event.roomEncrypted) return 'accept';
  if (event.type === 'm.reaction') return 'accept';
  if (event.type === 'm.room.encrypted') return 'accept';
  return 'ignore';
}
const ACTED_ON = new Set(['m.room.message', 'm.reaction', 'm.room.encrypted']);

export function inboundRouter(deps: InboundDeps) {
  const { assistant, owner, ops, state, log } = deps;
  const lanes = new Map<string, Promise<void>>();
  // Events handed on and not yet taken (in the log, or settled): a second delivery waits for it.
  const inFlight = new Map<string, Promise<void>>();
  const inflight = new Set<Promise<unknown>>();
  const track = (work: Promise<unknown>) => {
    inflight.add(work);
    void work.finally(() => inflight.delete(work)).catch(() => {});
  };
  /**
   * `prepare` runs after the room's earlier events; what it returns is started, not awaited (the
   * assistant keeps a room's turns in order itself). Decisions are awaited in `prepare`. Resolves
   * once the event is taken: the assistant has it in its log (or it needed none), or it was
   * dropped with a warning. It rejects only when the assistant could not take a message in (the
   * database is away), so the sync loop does not confirm it and the homeserver delivers it again.
   */
  const lane = (room: string, prepare: (accept: () => void) => Promise<Start | undefined>): Promise<void> => {
    const taken = Promise.withResolvers<void>();
    const accept = () => taken.resolve();
    const next = (lanes.get(room) ?? Promise.resolve())
      .then(async () => {
        const start = await prepare(accept);
        if (!start) return accept();
        track(
          start(accept).then(accept, (error: Error) => {
            taken.reject(error);
            log.error({ room }, `matrix: ${error.message}`);
          }),
        );
      })
      .catch((error: Error) => {
        accept();
        log.warn({ room }, `matrix: could not take in an event: ${error.message}`);
      });
    lanes.set(room, next);
    track(next);
    return taken.promise;
  };

  const typing = typingWhile(ops.typing, deps.typingEveryMs);

  /**
   * Gives the decision to `prompts` in order until one takes it (`explicit`: the owner named the
   * prompt by reacting to it or replying to it). A prompt that was closed some other way is marked
   * so, and the owner is told unless it was already decided.
   */
  const decide = async (
    prompts: StoredPrompt[],
    decision: PermissionDecision,
    explicit: boolean,
    recorded: () => void,
  ) => {
    for (const prompt of prompts) {
      const result = await typing(prompt.turnRoom, async () => {
        const decided = await assistant.decide(
          { requestId: prompt.requestId, decision, channel: MATRIX_CHANNEL, senderId: owner },
          deps.sinkFor(prompt.turnRoom),
        );
        // Taken once recorded, not once the resumed turn is done: after a kill during that turn,
        // the same answer delivered again must not meet the next question.
        if (decided.ok) recorded();
        if (decided.ok) await decided.resumed;
        return decided;
      });
      if (result.ok) return;
      // Settled some other way: later answers to it do nothing.
      if (!(await state.closePrompt(prompt.eventId, result.reason))) continue;
      if (result.reason === 'settled') continue;
      await ops.edit(
        prompt.promptRoom,
        prompt.eventId,
        decidedContent(prompt, outcomeLine(result.reason, '')),
      );
      if (explicit || prompts.length === 1)
        await ops.send(prompt.promptRoom, { msgtype: 'm.notice', body: result.text });
    }
    if (!explicit && prompts.length > 1) {
      await ops.send(await deps.privateRoom.ensure(), {
        msgtype: 'm.notice',
        body: 'No question was still waiting; nothing was run.',
      });
    }
  };

  const onMessage = (room: string, event: MatrixEvent): Promise<void> | undefined => {
    const content = event.content as {
      msgtype?: string;
      body?: unknown;
      'm.relates_to'?: { rel_type?: string; 'm.in_reply_to'?: { event_id?: string } };
    };
    const relates = content['m.relates_to'];
    if (typeof content.body !== 'string' || relates?.rel_type === 'm.replace') return;
    const media = mediaOf(content, deps.media);
    if (!media && content.msgtype !== 'm.text' && content.msgtype !== 'm.notice') return;
    const replyTo = relates?.['m.in_reply_to']?.event_id;
    const body = media ? media.caption : replyTo ? stripReplyFallback(content.body) : content.body;
    const fallback = content.body;
    return lane(room, async (accept) => {
      const decision = media ? undefined : decisionFromText(body);
      if (decision) {
        const open = await state.openPrompts(room);
        const chosen = open.find((p) => p.eventId === replyTo);
        if (open.length > 0) {
          // Awaited in the lane: a message right after an answer must not overtake it.
          await decide(chosen ? [chosen] : open, decision, chosen !== undefined, accept);
          return undefined;
        }
      }
      const text = media ? body : translateCommand(body);
      const ref = media ? undefined : outputCommand(text);
      if (ref !== undefined) {
        return plain(() =>
          ref
            ? sendOutputFile(deps, room, ref)
            : ops.send(room, { msgtype: 'm.notice', body: 'Usage: !output <ref>' }),
        );
      }
      const quote = replyTo
        ? await quotedReply({ ops, owner, botId: deps.botId }, room, replyTo, fallback)
        : undefined;
      const sink = deps.sinkFor(room);
      const help = /^\/(help|start)\s*$/.test(text.trim());
      const withHelp: ReplySink = (e) =>
        sink(e.type === 'reply' ? { ...e, text: `${e.text}\n\n${MATRIX_HELP}` } : e);
      const message: InboundMessage = {
        channel: MATRIX_CHANNEL,
        room,
        senderId: event.sender,
        text,
        id: event.event_id,
      };
      if (media?.attachment) message.attachments = [media.attachment];
      if (media?.unsupported) message.unsupported = media.unsupported;
      if (quote) message.quote = quote;
      return (accept) =>
        typing(room, () => assistant.handle(message, help ? withHelp : sink, { accepted: accept }));
    });
  };

  const onReaction = (room: string, event: MatrixEvent): Promise<void> | undefined => {
    const relates = event.content['m.relates_to'] as
      | { rel_type?: string; event_id?: string; key?: string }
      | undefined;
    if (relates?.rel_type !== 'm.annotation' || !relates.event_id || typeof relates.key !== 'string') return;
    const decision = decisionFromReaction(relates.key);
    const target = relates.event_id;
    if (!decision) return;
    return lane(room, async (accept) => {
      await deps.promptsPosted();
      const prompt = await state.promptByEvent(target);
      if (prompt && prompt.outcome === null) await decide([prompt], decision, true, accept);
      return undefined;
    });
  };

  /**
   * An event the bot could not decrypt. With its crypto running, each one gets a notice saying what
   * the owner can do (nothing reaches the model); without it, the room is unreadable and says so
   * once, not silence.
   */
  const onEncrypted = (room: string) =>
    lane(room, async () => {
      if (deps.decrypts) {
        const device = deps.device;
        const body = [
          '🔒 I could not decrypt your last message, so I did not act on it.',
          'Usually its key had not reached me yet (sent before I joined, or your client does not share keys with unverified sessions).',
          'Send it again; if this keeps happening, allow sending to unverified sessions in your client or verify my session',
          device ? `${device.id} (key ${device.ed25519}).` : '.',
        ].join(' ');
        return plain(() => ops.send(room, { msgtype: 'm.notice', body }));
      }
      const key = `encrypted_notice:${room}`;
      if (await state.get(key)) return undefined;
      await state.set(key, new Date().toISOString());
      // Said in the private room, never in clear into the encrypted one.
      const direct = await deps.privateRoom.ensure();
      const why = deps.e2ee.available
        ? 'encryption is turned off on this steward'
        : `encryption is unavailable on this steward (${deps.e2ee.reason})`;
      const body = `You wrote in https://matrix.to/#/${room}, which is end-to-end encrypted, and ${why}, so I cannot read it. Talk to me here or in another unencrypted room.`;
      if (direct === room || (await ops.encrypted(direct))) {
        log.warn({ room }, `matrix: cannot read an encrypted room: ${why}`);
        return undefined;
      }
      return plain(() => ops.send(direct, { msgtype: 'm.notice', body }));
    });

  /** A direct chat the owner opened with the bot alone becomes the private room. */
  const adoptIfDirect = async (room: string, invite: MatrixEvent) => {
    if (invite.content.is_direct !== true) return;
    const verdict = classifyDirectInvite({
      isDirect: invite.content.is_direct,
      sender: invite.sender,
      owner,
      bot: deps.botId,
      members: await ops.members(room),
      encrypted: await ops.encrypted(room),
      canDecrypt: deps.decrypts,
    });
    if (verdict.adopt) await deps.privateRoom.adopt(room);
    else log.info({ room, reason: verdict.reason }, 'matrix: a direct chat not taken as the private room');
  };

  return {
    /** One event from a sync batch (matrix-bot-sdk's emit names). `initial`: history, not acted on. */
    async onEvent(
      type: string,
      payload: unknown[],
      { initial, decrypted }: { initial: boolean; decrypted: boolean },
    ): Promise<Taken | undefined> {
      const [room, event] = payload as [string, MatrixEvent];
      if (type === 'room.event' && event.type === 'm.room.encryption') ops.encryptionChanged(room);
      if (type === 'room.invite') {
        if (event.sender === owner) {
          log.info({ room }, 'matrix: joining a room the owner invited me to');
          await ops.join(room);
          await adoptIfDirect(room, event);
        } else {
          log.info({ room }, 'matrix: declined an invite from someone other than the owner');
          await ops.leave(room);
        }
        return;
      }
      if (type !== 'room.event' || initial || !ACTED_ON.has(event.type)) return;
      if (event.sender !== owner) {
        log.debug({ room, type: event.type }, 'matrix: ignored an event from someone other than the owner');
        return;
      }
      const roomEncrypted = decrypted || (await ops.encrypted(room));
      if (clearEventPolicy({ type: event.type, roomEncrypted, decrypted }) === 'ignore') {
        log.warn({ room, type: event.type }, 'matrix: ignored an event in clear in an encrypted room');
        return;
      }
      // Seen is recorded once the event is taken, not when it arrives: a kill in between leaves it
      // unseen and unconfirmed, so it comes again. Meanwhile a second delivery is skipped here.
      const id = event.event_id;
      // Delivered again while the first delivery is still being taken: this batch waits for it.
      const earlier = inFlight.get(id);
      if (earlier) return { taken: earlier };
      if (await state.seen(id)) return;
      log.debug({ room, type: event.type, eventId: id }, 'matrix: took in an event');
      const taking =
        event.type === 'm.room.message'
          ? onMessage(room, event)
          : event.type === 'm.reaction'
            ? onReaction(room, event)
            : onEncrypted(room);
      const taken = Promise.resolve(taking)
        .then(() => state.markSeen(id))
        .finally(() => inFlight.delete(id));
      taken.catch(() => {});
      inFlight.set(id, taken);
      return { taken };
    },
    /** Resolves when everything taken in so far has been handled. */
    async idle(): Promise<void> {
      while (inflight.size > 0) await Promise.allSettled([...inflight]);
    },
  };
}
