// A document's bytes become text: UTF-8 text files as they are, PDFs through pdfjs, anything else
// refused with the reason.
import { documentType } from './detect.ts';
import { PdfUnreadable, pdfText } from './pdf-text.ts';

export type DocumentText = { ok: true; text: string; note?: { note: string } } | { ok: false; why: string };

const SNIFF_BYTES = 8192;

export async function readDocument(
  bytes: Uint8Array,
  name: string,
  mime: string | undefined,
  maxPages: number,
): Promise<DocumentText> {
  const verdict = documentType(name, mime, bytes.subarray(0, SNIFF_BYTES));
  switch (verdict.type) {
    case 'unsupported':
      return { ok: false, why: `I cannot read it (${verdict.why})` };
    case 'text': {
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
      } catch {
        return { ok: false, why: 'I cannot read it (it is not UTF-8 text past its beginning)' };
      }
      return { ok: true, text };
    }
    case 'pdf':
      return readPdf(bytes, maxPages);
  }
}

async function readPdf(bytes: Uint8Array, maxPages: number): Promise<DocumentText> {
  try {
    const pdf = await pdfText(bytes, maxPages);
    if (pdf.text.replace(/\[page \d+\]/g, '').trim() === '')
      return { ok: false, why: 'the PDF has no text layer (a scan?), and I do not read images of text' };
    const pages =
      pdf.read < pdf.pages
        ? `PDF, the first ${pdf.read} of ${pdf.pages} pages`
        : `PDF, ${pdf.pages} ${pdf.pages === 1 ? 'page' : 'pages'}`;
    return { ok: true, text: pdf.text, note: { note: pages } };
  } catch (error) {
    if (error instanceof PdfUnreadable) return { ok: false, why: `I cannot read the PDF (${error.message})` };
    throw error;
  }
}
