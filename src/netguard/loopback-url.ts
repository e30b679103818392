// Whether a configured endpoint stays on this machine: a literal loopback host. Used where data
// the owner marked private would otherwise leave (the sensitive route, a sensitive voice note).

export function isLoopbackUrl(raw: string): boolean {
  try {
    const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
  } catch {
    return false;
  }
}
