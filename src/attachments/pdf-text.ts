// A PDF's text, by pdfjs-dist (Mozilla's reader). Loaded on the first PDF only: the library is
// large and most sessions never see one. No scripts, no fonts, no network: text items only.

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

export interface PdfText {
  text: string;
  pages: number;
  /** Pages read; fewer than `pages` when the cap cut it short. */
  read: number;
}

export class PdfUnreadable extends Error {
  override name = 'PdfUnreadable';
}

/** Text of each page in order, a marker line between pages, at most `maxPages` pages. */
export async function pdfText(bytes: Uint8Array, maxPages: number): Promise<PdfText> {
  const pdfjs = (await import('pdfjs-dist/legacy/build/pdf.mjs')) as unknown as PdfJs;
  const task = pdfjs.getDocument({
    // pdfjs takes ownership of (detaches) the buffer it is given: hand it a copy.
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
      const reason =
        (error as Error).name === 'PasswordException' ? 'it is password-protected' : 'it is damaged';
      throw new PdfUnreadable(reason);
    }
    const read = Math.min(doc.numPages, maxPages);
    const parts: string[] = [];
    for (let n = 1; n <= read; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      let line = '';
      for (const item of content.items) {
        line += item.str ?? '';
        if (item.hasEOL) line += '\n';
      }
      page.cleanup();
      parts.push(`[page ${n}]\n${line.trimEnd()}`);
    }
    return { text: parts.join('\n\n'), pages: doc.numPages, read };
  } finally {
    await task.destroy();
  }
}
