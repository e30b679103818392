// A tool result as text. MCP content may be text, images, audio, resources or links; the model
// gets text only, with binary parts described (type, size, reference) rather than pasted. Pure.

interface Part {
  type?: unknown;
  text?: unknown;
  data?: unknown;
  mimeType?: unknown;
  uri?: unknown;
  name?: unknown;
  description?: unknown;
  resource?: { uri?: unknown; mimeType?: unknown; text?: unknown; blob?: unknown };
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Bytes a base64 string decodes to, without decoding it. */
export function base64Bytes(data: string): number {
  const trimmed = data.replace(/\s+/g, '');
  const padding = trimmed.endsWith('==') ? 2 : trimmed.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((trimmed.length * 3) / 4) - padding);
}

function sizeWords(bytes: number): string {
  return bytes < 1024 ? `${bytes} bytes` : `${Math.round(bytes / 102.4) / 10} KB`;
}

function partText(part: Part): string {
  switch (part.type) {
    case 'text':
      return str(part.text) ?? '';
    case 'image':
    case 'audio': {
      const mime = str(part.mimeType) ?? 'unknown type';
      const bytes = base64Bytes(str(part.data) ?? '');
      return `[${part.type}: ${mime}, ${sizeWords(bytes)}; not shown to you]`;
    }
    case 'resource_link': {
      const bits = [str(part.name), str(part.mimeType), str(part.description)].filter(Boolean);
      return `[resource link ${str(part.uri) ?? '(no uri)'}${bits.length ? `: ${bits.join('; ')}` : ''}]`;
    }
    case 'resource': {
      const r = part.resource ?? {};
      const head = `[resource ${str(r.uri) ?? '(no uri)'}${str(r.mimeType) ? ` (${str(r.mimeType)})` : ''}]`;
      const text = str(r.text);
      if (text !== undefined) return `${head}\n${text}`;
      return `${head} ${sizeWords(base64Bytes(str(r.blob) ?? ''))} of binary data; not shown to you`;
    }
    default:
      return `[a ${JSON.stringify(String(part.type)).slice(0, 40)} part this client cannot show]`;
  }
}

/**
 * The text of a `tools/call` result and whether the server called it an error. Structured content
 * is used only when there is no content to show (servers send both, the text being the same data).
 */
export function resultText(result: unknown): { text: string; isError: boolean } {
  const r = (typeof result === 'object' && result !== null ? result : {}) as {
    content?: unknown;
    structuredContent?: unknown;
    isError?: unknown;
    toolResult?: unknown;
  };
  const parts = Array.isArray(r.content) ? (r.content as Part[]) : [];
  let text = parts.map(partText).join('\n');
  if (text === '' && r.structuredContent !== undefined) text = JSON.stringify(r.structuredContent, null, 2);
  if (text === '' && r.toolResult !== undefined) text = JSON.stringify(r.toolResult, null, 2);
  if (text === '') text = '(the tool returned no content)';
  return { text, isError: r.isError === true };
}
