import type { InboundMessage, ReplySink } from '../channel/port.ts';
import type { Logger } from '../log.ts';
import type { Db } from '../store/db.ts';
import { sessionLog } from '../store/session-log.ts';
import { type Route, runTurn } from './turn.ts';

export interface AssistantDeps {
  db: Db;
  route: Route;
  log: Logger;
  /** The owner's sender id on each channel. Anyone else is ignored. */
  owners: Readonly<Record<string, string>>;
  now?: () => Date;
}

export interface Assistant {
  /** Handles one inbound message; resolves when every reply event has been sent to the sink. */
  handle(message: InboundMessage, sink: ReplySink): Promise<void>;
}

const HELP = [
  'Commands:',
  '/new – start a fresh session (the old one stays in the log)',
  '/help – this list',
].join('\n');

/** The one place that decides who is heard and how a message becomes a turn, for every channel. */
export function createAssistant(deps: AssistantDeps): Assistant {
  const sessions = sessionLog(deps.db);
  const turnDeps = { ...deps, sessions, now: deps.now ?? (() => new Date()) };
  const queues = new Map<string, Promise<void>>();

  // Messages of one room are answered one at a time, in the order they arrived.
  const serialize = (key: string, work: () => Promise<void>): Promise<void> => {
    const next = (queues.get(key) ?? Promise.resolve()).then(work, work);
    const settled = next.catch(() => {});
    queues.set(key, settled);
    void settled.then(() => {
      if (queues.get(key) === settled) queues.delete(key);
    });
    return next;
  };

  return {
    handle(message, sink) {
      if (deps.owners[message.channel] !== message.senderId) {
        deps.log.info(
          { channel: message.channel, room: message.room },
          'ignored a message from someone other than the owner',
        );
        return Promise.resolve();
      }
      return serialize(`${message.channel}\u0000${message.room}`, async () => {
        const text = message.text.trim();
        if (text === '/new') {
          await sessions.startFresh(message.channel, message.room);
          await sink({ type: 'reply', text: 'Started a fresh session. The earlier one is kept in the log.' });
          return;
        }
        if (text === '/help' || text === '/start') {
          await sink({ type: 'reply', text: HELP });
          return;
        }
        const session = await sessions.open(message.channel, message.room);
        await runTurn(turnDeps, session, message.text, message.senderId, sink);
      });
    },
  };
}
