import { randomUUID } from 'node:crypto';
import type { ReplySink } from '../channel/port.ts';
import type { Provider } from '../gateway/types.ts';
import type { Logger } from '../log.ts';
import type { Db } from '../store/db.ts';
import type { Session, SessionLog } from '../store/session-log.ts';
import { recordUsage } from '../store/usage-ledger.ts';
import { rebuildConversation } from './session-events.ts';
import { systemPrompt } from './system-prompt.ts';

export interface Route {
  name: string;
  provider: Provider;
  model: string;
}

export interface TurnDeps {
  db: Db;
  sessions: SessionLog;
  route: Route;
  log: Logger;
  now: () => Date;
}

/**
 * One owner message, answered. The message is in the log before the model is called, and the
 * answer is in the log before the channel is told it is final, so the log alone can rebuild the
 * conversation. A model failure is reported to the owner and recorded; it never ends the session.
 */
export async function runTurn(
  deps: TurnDeps,
  session: Session,
  text: string,
  sender: string,
  sink: ReplySink,
) {
  const { sessions, route, log } = deps;
  const turnId = randomUUID();
  await sessions.append(session.id, { kind: 'user_message', text, sender }, turnId);

  const messages = [
    { role: 'system' as const, content: systemPrompt(deps.now()) },
    ...rebuildConversation(await sessions.events(session.id)),
  ];
  const started = performance.now();
  let reply = '';
  let tokensIn = 0;
  let tokensOut = 0;
  let failure: string | undefined;

  for await (const event of route.provider.stream({ model: route.model, messages })) {
    if (event.type === 'text_delta') {
      reply += event.text;
      await sink({ type: 'text_delta', text: event.text });
    } else if (event.type === 'usage') {
      tokensIn = event.inputTokens;
      tokensOut = event.outputTokens;
    } else if (event.type === 'error') {
      failure = event.message;
    }
  }

  await recordUsage(deps.db, {
    sessionId: session.id,
    route: route.name,
    provider: route.provider.kind,
    model: route.model,
    tokensIn,
    tokensOut,
    costUsd: null,
    latencyMs: performance.now() - started,
    outcome: failure ? 'error' : 'ok',
  });

  if (failure) {
    const partial = reply ? ' (the reply above was cut off)' : '';
    await sessions.append(session.id, { kind: 'model_error', message: failure, route: route.name }, turnId);
    log.warn({ sessionId: session.id, route: route.name }, `model call failed: ${failure}`);
    await sink({
      type: 'notice',
      level: 'error',
      text: `model: ${failure}${partial}; your message is kept, so send another when the model is back`,
    });
    return;
  }
  await sessions.append(
    session.id,
    { kind: 'assistant_message', text: reply, model: route.model, route: route.name },
    turnId,
  );
  await sink({ type: 'reply', text: reply });
}
