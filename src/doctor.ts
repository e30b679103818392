import { request } from 'undici';
import { describeJail, type HostJailMode, type JailStatus } from './sandbox/host-jail.ts';
import type { BashStatus } from './sandbox/shell-dialect.ts';

export type CheckStatus = 'ok' | 'warn' | 'fail';
export interface CheckResult {
  status: CheckStatus;
  detail: string;
}

const TIMEOUT_MS = 5000;

/** GETs a URL with a deadline; connection failures become a readable reason, never a throw. */
export async function probeJson(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown } | { error: string }> {
  try {
    const response = await request(url, {
      headers: { accept: 'application/json', ...headers },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await response.body.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: response.statusCode, body };
  } catch (error) {
    const e = error as { code?: string; name?: string; message?: string };
    if (e.name === 'TimeoutError' || e.name === 'AbortError')
      return { error: `no answer within ${TIMEOUT_MS / 1000} s` };
    const reasons: Record<string, string> = {
      ECONNREFUSED: 'connection refused',
      ENOTFOUND: 'host not found',
      ECONNRESET: 'connection reset',
      EHOSTUNREACH: 'host unreachable',
    };
    return { error: reasons[e.code ?? ''] ?? e.message ?? String(error) };
  }
}

/** Is the OpenAI-compatible endpoint up, does it take our key, and does it serve the model? */
export async function checkModelEndpoint(
  baseUrl: string,
  model: string,
  apiKey?: string,
): Promise<CheckResult> {
  const url = `${baseUrl}/models`;
  const result = await probeJson(url, apiKey ? { authorization: `Bearer ${apiKey}` } : {});
  if ('error' in result) return { status: 'fail', detail: `cannot reach ${url}: ${result.error}` };
  if (result.status === 401 || result.status === 403) {
    return {
      status: 'fail',
      detail: `${url} refused the key (HTTP ${result.status}); check STEWARD_MODEL_API_KEY`,
    };
  }
  if (result.status !== 200)
    return { status: 'warn', detail: `${url} answered HTTP ${result.status}; chat may still work` };
  const ids = ((result.body as { data?: Array<{ id?: unknown }> })?.data ?? [])
    .map((m) => m.id)
    .filter((id): id is string => typeof id === 'string');
  if (ids.length > 0 && !ids.includes(model)) {
    return {
      status: 'fail',
      detail: `${baseUrl} does not list model "${model}"; it serves ${ids.slice(0, 8).join(', ')}${ids.length > 8 ? ', …' : ''}`,
    };
  }
  return { status: 'ok', detail: `${baseUrl} serves ${model}` };
}

/**
 * The `shell` line: which bash and which jail, or what running unjailed costs and how to fix it.
 * `required` without the full jail fails (shell refuses every command then).
 */
export function checkHostShell(
  bash: BashStatus,
  jail: JailStatus,
  mode: HostJailMode,
  asRoot = false,
): CheckResult {
  if (bash.kind !== 'ok') return { status: 'fail', detail: bash.reason };
  const root = asRoot
    ? '; steward runs as root: run it as an ordinary user (the jail still isolates files, processes and network, but a mistake in it costs more)'
    : '';
  const detail = `bash ${bash.version} at ${bash.path}; ${describeJail(jail, mode)}${root}`;
  if (mode !== 'off' && jail.kind === 'bwrap') return { status: asRoot ? 'warn' : 'ok', detail };
  return { status: mode === 'required' ? 'fail' : 'warn', detail };
}
