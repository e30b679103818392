// Run by test/approval-crash.test.ts as a real child process: performs one transition of an
// approval (the owner's decision, or the deadline passing) and SIGKILLs itself right after its
// n-th database statement. With n = 0 it runs to the end and prints how many statements it made.
import { openPostgres } from '../../src/store/open-db.ts';
import { CHANNEL, countingDb, OWNER, ROOM, rigAssistant } from './approval-rig.ts';

const [url, mode, killAfterText, requestId, marker, modelUrl] = process.argv.slice(2) as string[];
const killAfter = Number(killAfterText);
let statements = 0;
const db = countingDb(await openPostgres(url as string), (n) => {
  statements = n;
  if (n === killAfter) process.kill(process.pid, 'SIGKILL');
});
// Expiry: the clock is past every deadline.
const now = mode === 'expire' ? () => new Date(Date.now() + 3_600_000) : () => new Date();
const assistant = rigAssistant(db, { modelUrl: modelUrl as string, marker: marker as string, now });
const sink = () => {};
const counted = statements;
if (mode === 'decide') {
  const result = await assistant.decide(
    { requestId: requestId as string, decision: 'once', channel: CHANNEL, senderId: OWNER },
    sink,
  );
  if (result.ok) await result.resumed;
} else {
  await assistant.expireOverdue((channel, room) => (channel === CHANNEL && room === ROOM ? sink : undefined));
}
process.stdout.write(`${JSON.stringify({ statements: statements - counted })}\n`);
await db.close();
