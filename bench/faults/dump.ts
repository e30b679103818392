// With FAULTS_DEBUG set, a scenario leaves its story in FAULTS_OUT (or /tmp): steward's log, the
// deliveries table, the messages the emulator stored, and the proxy's calls in order. That is what
// a lost or doubled reply is traced with.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { query } from './db.ts';
import type { TelegramRig } from './telegram-rig.ts';

export async function dumpScenario(
  name: string,
  rig: TelegramRig,
  dbUrl: string,
  log: string,
): Promise<void> {
  if (!process.env.FAULTS_DEBUG) return;
  const dir = process.env.FAULTS_OUT ?? '/tmp';
  const file = (what: string) => join(dir, `${name}.${what}`);
  writeFileSync(file('steward.log'), log);
  const deliveries = await query(
    dbUrl,
    'select id, kind, room, turn_id, status, message_ids, error, left(body, 60) as body, reported_at, report_attempts, created_at from deliveries order by id',
  );
  writeFileSync(file('deliveries.json'), JSON.stringify(deliveries, null, 1));
  writeFileSync(
    file('emulator.json'),
    JSON.stringify(
      rig.emulator
        .botMessages()
        .map((m) => ({ id: m.messageId, chat: m.chatId, text: m.text.slice(0, 120) })),
      null,
      1,
    ),
  );
  if (rig.proxy) writeFileSync(file('proxy.json'), JSON.stringify(rig.proxy.calls, null, 1));
}

/** The Matrix scenarios' story: steward's log (every process), the deliveries, digest runs and events. */
export async function dumpMatrix(
  name: string,
  dbUrl: string,
  log: string,
  timelines?: () => Promise<unknown>,
): Promise<void> {
  if (!process.env.FAULTS_DEBUG) return;
  const dir = process.env.FAULTS_OUT ?? '/tmp';
  const file = (what: string) => join(dir, `${name}.${what}`);
  writeFileSync(file('steward.log'), log);
  const tables = {
    deliveries: await query(
      dbUrl,
      'select id, kind, room, turn_id, status, message_ids, error, left(body, 60) as body, created_at from deliveries order by id',
    ),
    digest_runs: await query(dbUrl, 'select * from digest_runs order by id'),
    events: await query(
      dbUrl,
      `select e.id, s.room, e.turn_id, e.kind, left(e.payload::text, 80) as payload, e.created_at
       from session_events e join sessions s on s.id = e.session_id order by e.id`,
    ),
  };
  writeFileSync(file('tables.json'), JSON.stringify(tables, null, 1));
  if (timelines) writeFileSync(file('timelines.json'), JSON.stringify(await timelines(), null, 1));
}
