// A PDF's text, by pdfjs-dist (Mozilla's reader), in a child process: a PDF of a few kilobytes can
// unpack to gigabytes or keep the parser busy for minutes, and V8 ends a whole process (a worker
// thread's too) at its heap limit. So the reader is a process of its own with a heap limit, an
// empty environment and a time limit; when it dies or is killed, only the PDF is lost.
// No scripts (isEvalSupported: false), no fonts, no network: text items only.
import { fork } from 'node:child_process';
import { ATTACHMENT_BOUNDS } from '../limits.ts';

export interface PdfText {
  text: string;
  pages: number;
  /** Pages read; fewer than `pages` when the page cap or the text cap cut it short. */
  read: number;
}

export class PdfUnreadable extends Error {
  override name = 'PdfUnreadable';
}

export interface PdfBounds {
  maxChars: number;
  timeoutMs: number;
  heapMb: number;
}

/** What the reader answers: the text, or why the PDF could not be read. */
export type PdfAnswer = { ok: true; pdf: PdfText } | { ok: false; why: string };

export function pdfText(
  bytes: Uint8Array,
  maxPages: number,
  bounds: Partial<PdfBounds> = {},
): Promise<PdfText> {
  const b: PdfBounds = {
    maxChars: bounds.maxChars ?? ATTACHMENT_BOUNDS.pdfTextChars,
    timeoutMs: bounds.timeoutMs ?? ATTACHMENT_BOUNDS.pdfTimeoutMs,
    heapMb: bounds.heapMb ?? ATTACHMENT_BOUNDS.pdfHeapMb,
  };
  return new Promise((resolve, reject) => {
    const reader = fork(new URL('./pdf-reader.ts', import.meta.url), {
      execArgv: [`--max-old-space-size=${b.heapMb}`],
      env: {},
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reader.kill('SIGKILL');
      outcome();
    };
    const timer = setTimeout(
      () => settle(() => reject(new PdfUnreadable(`it took longer than ${b.timeoutMs / 1000} s to read`))),
      b.timeoutMs,
    );
    reader.on('message', (answer: PdfAnswer) =>
      settle(() => (answer.ok ? resolve(answer.pdf) : reject(new PdfUnreadable(answer.why)))),
    );
    reader.on('error', (error) =>
      settle(() => reject(new PdfUnreadable(`the reader did not start (${error.name})`))),
    );
    reader.on('exit', () =>
      settle(() => reject(new PdfUnreadable(`it needs more than ${b.heapMb} MB of memory or is damaged`))),
    );
    reader.send({ bytes, maxPages, maxChars: b.maxChars });
  });
}
