// A final reply the channel could not deliver (after its own retries) is in the delivery ledger as
// failed. Once the channel is back (it came online, the owner wrote again, or the sweeper's next
// round) it is posted to its room with a line saying it is late, inside the room's queue so it
// never lands in the middle of a turn. Posting it is claimed with a conditional update, so two
// sweeps (or two stewards) post it once; a post that fails again gives the claim back.
import { randomUUID } from 'node:crypto';
import {
  claimUndelivered,
  recordDelivery,
  releaseUndelivered,
  undeliveredReplies,
} from '../store/delivery-ledger.ts';
import type { Core, Outbox } from './core.ts';

/** What the owner reads above a reply that arrives late. Pure. */
export function lateReplyText(body: string, sentAt: Date): string {
  return `This reply could not be delivered at ${sentAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, so here it is now:\n\n${body}`;
}

/** Posts the channel's undelivered replies; returns how many reached their room. */
export async function deliverLate(core: Core, outbox: Outbox, channel: string): Promise<number> {
  let delivered = 0;
  const tries = core.loop.limits.lateReplyTries;
  for (const failed of await undeliveredReplies(core.db, channel, tries)) {
    const sink = outbox(failed.channel, failed.room);
    if (!sink) continue;
    await core.runner.inRoom(failed.channel, failed.room, async () => {
      if (!(await claimUndelivered(core.db, failed.id, core.now()))) return;
      const turnId = randomUUID();
      let delivery = { delivered: false, messageIds: [] as string[] };
      try {
        await sink({ type: 'turn_started', turnId });
        delivery = (await sink({ type: 'reply', text: lateReplyText(failed.body, failed.createdAt) })) ?? {
          delivered: true,
          messageIds: [],
        };
        await sink({ type: 'turn_ended', turnId, status: 'answered' });
      } catch (error) {
        core.log.warn(`could not post a late reply: ${(error as Error).message}`);
      }
      await recordDelivery(core.db, {
        kind: 'late_reply',
        channel: failed.channel,
        room: failed.room,
        delivered: delivery.delivered,
        messageIds: delivery.messageIds,
      });
      if (delivery.delivered) {
        delivered++;
        return;
      }
      const attempts = await releaseUndelivered(core.db, failed.id);
      if (attempts >= tries)
        core.log.error(
          { channel: failed.channel, delivery: failed.id },
          `a reply could not be delivered after ${attempts} late attempts; it stays in the deliveries table`,
        );
    });
  }
  return delivered;
}
