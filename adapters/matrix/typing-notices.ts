// Typing notices for a room go out one at a time, the newest wanted state winning. Sent side by
// side, a slow "typing" (a retry, a loaded homeserver) can reach the homeserver after the turn's
// "stopped", and the bot then shows as typing for the notice's whole timeout after its reply.

/**
 * Wraps `send` so that per room one notice is in flight and only the latest waiting one follows.
 * A failed send is `send`'s to report; the next notice still goes.
 */
export function orderedNotices(
  send: (room: string, on: boolean) => Promise<void>,
): (room: string, on: boolean) => Promise<void> {
  const rooms = new Map<string, { next?: boolean; done: Promise<void> }>();
  return (room, on) => {
    const busy = rooms.get(room);
    if (busy) {
      busy.next = on;
      return busy.done;
    }
    const state: { next?: boolean; done: Promise<void> } = { next: on, done: Promise.resolve() };
    state.done = (async () => {
      try {
        for (let wanted = state.next; wanted !== undefined; wanted = state.next) {
          state.next = undefined;
          await send(room, wanted).catch(() => {});
        }
      } finally {
        rooms.delete(room);
      }
    })();
    rooms.set(room, state);
    return state.done;
  };
}
