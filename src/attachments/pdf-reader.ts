// The child process behind pdf-text.ts (run as `node pdf-reader.ts`): takes one PDF over IPC,
// reads the text items of each page in order, a marker line between pages, until the page cap or
// the text cap, answers once and exits.
import type { PdfAnswer } from './pdf-text.ts';

interface PdfTextItem {
  str?: string;
  hasEOL?: boolean;
}

interface PdfJs {
  getDocument(options: Record<string, unknown>): {
    promise: Promise<{
      numPages: number;
      getPage(n: number): Promise<{ getTextContent(): Promise<{ items: PdfTextItem[] }>; cleanup(): void }>;
    }>;
    destroy(): Promise<void>;
  };
}

async function extract(bytes: Uint8Array, maxPages: number, maxChars: number): Promise<PdfAnswer> {
  const pdfjs = (await import('pdfjs-dist/legacy/build/pdf.mjs')) as unknown as PdfJs;
  const task = pdfjs.getDocument({
    // pdfjs refuses a Buffer (what a Buffer sent over IPC arrives as): a plain copy.
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    enableXfa: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  try {
    let doc: Awaited<ReturnType<PdfJs['getDocument']>['promise']>;
    try {
      doc = await task.promise;
    } catch (error) {
      const why =
        (error as Error).name === 'PasswordException' ? 'it is password-protected' : 'it is damaged';
      return { ok: false, why };
    }
    const parts: string[] = [];
    let chars = 0;
    let read = 0;
    while (read < Math.min(doc.numPages, maxPages) && chars < maxChars) {
      read++;
      const page = await doc.getPage(read);
      const content = await page.getTextContent();
      let line = '';
      for (const item of content.items) {
        line += item.str ?? '';
        if (item.hasEOL) line += '\n';
      }
      page.cleanup();
      // Pages are joined by a blank line: its two characters count too.
      const gap = parts.length > 0 ? 2 : 0;
      const part = `[page ${read}]\n${line.trimEnd()}`.slice(0, Math.max(0, maxChars - chars - gap));
      chars += part.length + gap;
      parts.push(part);
    }
    return { ok: true, pdf: { text: parts.join('\n\n'), pages: doc.numPages, read } };
  } finally {
    await task.destroy();
  }
}

process.once('message', (job: { bytes: Uint8Array; maxPages: number; maxChars: number }) => {
  extract(job.bytes, job.maxPages, job.maxChars)
    .catch((error: unknown): PdfAnswer => ({ ok: false, why: `it is damaged (${(error as Error).name})` }))
    .then((answer) => process.send?.(answer, () => process.exit(0)));
});
