// Preloaded into a short-lived steward command by the channel bench: writes the process's peak
// resident memory (KiB, getrusage's maxrss) to $BENCH_PEAK_FILE as it exits.
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
  if (process.env.BENCH_PEAK_FILE)
    writeFileSync(process.env.BENCH_PEAK_FILE, String(process.resourceUsage().maxRSS));
});
