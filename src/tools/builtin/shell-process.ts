// Watching and stopping the process group a shell command runs in.
import { readdir, readFile } from 'node:fs/promises';

const POLL_MS = 25;

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * Whether any member of the process group is still running. A zombie counts as gone: it holds no
 * pipes and runs no code, and where nothing reaps orphans (a container whose PID 1 is not an init)
 * it would otherwise look alive forever.
 */
export async function groupAlive(pgid: number): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return true; // no procfs: trust kill(0)
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = await readFile(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z') return true;
  }
  return false;
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

export async function waitFor(condition: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
}
