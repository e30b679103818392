// Typing notices for a room go out one at a time, the newest wanted state winning. Sent side by
// side, a slow "typing" (a retry, a loaded homeserver) can reach the homeserver after the turn's
// "stopped", and the bot then shows as typing for the notice's whole timeout after its reply.

type Notice = (room: string, on: boolean) => Promise<void>;

/**
 * Runs work with the bot typing in its room, refreshed every `everyMs`. Work that overlaps in a
 * room (a decision resuming a turn there while another turn runs) shares the notice: "stopped"
 * goes once the last of it ends, not at the first.
 */
export function typingWhile(notice: Notice, everyMs: number) {
  const typingIn = new Map<string, number>();
  return async <T>(room: string, work: () => Promise<T>): Promise<T> => {
    typingIn.set(room, (typingIn.get(room) ?? 0) + 1);
    void notice(room, true);
    const timer = setInterval(() => void notice(room, true), everyMs);
    try {
      return await work();
    } finally {
      clearInterval(timer);
      const left = (typingIn.get(room) ?? 1) - 1;
      if (left > 0) typingIn.set(room, left);
      else {
        typingIn.delete(room);
        void notice(room, false);
      }
    }
  };
}

/**
 * Wraps `send` so that per room one notice is in flight and only the latest waiting one follows.
 * A failed send is `send`'s to report; the next notice still goes.
 */
export function orderedNotices(send: Notice): Notice {
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
