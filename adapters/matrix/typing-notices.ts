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
    // Held before the first send runs, so that one throwing at once still frees the room.
    rooms.set(room, state);
    state.done = (async () => {
      try {
        for (let wanted = state.next; wanted !== undefined; wanted = state.next) {
          state.next = undefined;
          try {
            await send(room, wanted);
          } catch {
            // `send` reports its own failures; the next notice still goes.
          }
        }
      } finally {
        rooms.delete(room);
      }
    })();
    return state.done;
  };
}
