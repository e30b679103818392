import type { ModelRequest, Provider, ProviderEvent } from './types.ts';

export interface RouteEntry {
  /** The provider's configured name, for the ledger and messages. */
  providerName: string;
  provider: Provider;
  model: string;
  /** The model takes image input (`vision: true` in config); others get a line in an image's place. */
  vision?: boolean;
}

/** A named, ordered fallback chain of (provider, model). */
export interface Route {
  name: string;
  entries: RouteEntry[];
}

export interface ModelCallRecord {
  route: string;
  provider: string;
  model: string;
  tokensIn: number;
  tokensOut: number;
  latencyMs: number;
  outcome: 'ok' | 'error';
}

export interface RouterDeps {
  record(call: ModelCallRecord): Promise<void>;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Retries of one entry before the next is tried (only before any output). */
  retries: number;
  backoffMs: number;
}

export const DEFAULT_RETRY = { retries: 2, backoffMs: 500 };

export type RoutedEvent = ProviderEvent | { type: 'model'; entry: RouteEntry };

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

const IMAGE_NOT_SHOWN =
  '[steward] (An image was sent here; this model does not take images, so it is not shown.)';

/** A model not marked for vision gets a line where each image would be, never the image. */
export function withoutImages(messages: ModelRequest['messages']): ModelRequest['messages'] {
  if (!messages.some((m) => m.role === 'user' && m.images?.length)) return messages;
  return messages.map((m) =>
    m.role === 'user' && m.images?.length
      ? { role: 'user', content: `${m.content}\n\n${IMAGE_NOT_SHOWN}` }
      : m,
  );
}

/**
 * Streams one model call along a route. Before any output, a retryable failure is retried with
 * backoff and then the next entry is tried; once text or a tool call has been seen, a failure is
 * final, so the owner never gets half an answer from one model finished by another. Every attempt
 * is one ledger row. The stream ends with exactly one `done` or `error`.
 */
export async function* streamRoute(
  route: Route,
  request: Omit<ModelRequest, 'model'>,
  deps: RouterDeps,
): AsyncGenerator<RoutedEvent> {
  type Failure = Extract<ProviderEvent, { type: 'error' }>;
  let lastError: Failure | undefined;
  const tried: string[] = [];
  for (const entry of route.entries) {
    for (let attempt = 0; attempt <= deps.retries; attempt++) {
      if (attempt > 0) await deps.sleep(deps.backoffMs * 2 ** (attempt - 1), request.signal);
      if (request.signal?.aborted) break;
      const name = `${entry.providerName}/${entry.model}`;
      if (!tried.includes(name)) tried.push(name);
      yield { type: 'model', entry };
      const started = performance.now();
      let tokensIn = 0;
      let tokensOut = 0;
      let output = false;
      let done: ProviderEvent | undefined;
      let failure: Failure | undefined;
      const messages = entry.vision ? request.messages : withoutImages(request.messages);
      for await (const event of entry.provider.stream({ ...request, messages, model: entry.model })) {
        if (event.type === 'usage') {
          tokensIn = event.inputTokens;
          tokensOut = event.outputTokens;
        }
        if (event.type === 'error') {
          // Judged here, not only by the provider: after output the owner must not get a second model.
          failure = output && !event.afterOutput ? { ...event, retryable: false, afterOutput: true } : event;
          break;
        }
        if (event.type === 'done') {
          done = event;
          break;
        }
        if (event.type === 'text_delta' || event.type === 'tool_call') output = true;
        yield event;
      }
      if (!done && !failure) {
        // A provider that broke its contract (no terminal event) still ends the route's stream well.
        failure = {
          type: 'error',
          kind: 'protocol',
          message: `${entry.providerName}/${entry.model}: the reply ended without finishing`,
          retryable: false,
          afterOutput: output,
        };
      }
      await deps.record({
        route: route.name,
        provider: entry.providerName,
        model: entry.model,
        tokensIn,
        tokensOut,
        latencyMs: performance.now() - started,
        outcome: failure ? 'error' : 'ok',
      });
      if (!failure) {
        if (done) yield done;
        return;
      }
      if (failure.afterOutput || failure.kind === 'aborted') {
        yield failure;
        return;
      }
      lastError = failure;
      if (!failure.retryable) break;
    }
    if (request.signal?.aborted) break;
  }
  if (request.signal?.aborted) {
    // Cancelled between attempts: that is the outcome, not the failure that came before it.
    yield {
      type: 'error',
      kind: 'aborted',
      message: 'the request was cancelled',
      retryable: false,
      afterOutput: false,
    };
    return;
  }
  if (!lastError) {
    yield {
      type: 'error',
      kind: 'protocol',
      message: `route ${route.name} has no models; add at least one under routes in the config file`,
      retryable: false,
      afterOutput: false,
    };
    return;
  }
  yield {
    type: 'error',
    kind: lastError.kind,
    ...(lastError.status === undefined ? {} : { status: lastError.status }),
    message:
      tried.length > 1
        ? `every model of route ${route.name} failed (${tried.join(', ')}); last: ${lastError.message}`
        : lastError.message,
    retryable: false,
    afterOutput: false,
  };
}
