// A misbehaving Telegram: an HTTP proxy in front of the Bot API emulator that answers some calls
// itself with 429 (retry_after), 5xx, a reset connection, or forwards them late. Resets happen
// before the request is forwarded, so a reset send never reached the emulator (counting stays
// exact); what steward sees is the same ECONNRESET a lost answer gives.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault = 'pass' | '429' | '5xx' | 'reset' | 'slow';

export interface FaultPlan {
  /** The fault for one call of `method`; called once per request. */
  pick(method: string): Fault;
  retryAfterS?: number;
  slowMs?: number;
}

export interface FaultProxy {
  apiRoot: string;
  /** How many of each fault each method got. */
  injected: Record<string, Partial<Record<Fault, number>>>;
  /** Every call in arrival order, with its fault and the start of its text (for a lost reply's story). */
  calls: Array<{ at: number; method: string; fault: Fault; text?: string }>;
  close(): Promise<void>;
}

/** A seeded generator, so a run's faults can be replayed. */
export function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Faults with the given odds (the rest pass), on the methods named (others always pass). */
export function randomPlan(
  random: () => number,
  odds: Partial<Record<Exclude<Fault, 'pass'>, number>>,
  methods: RegExp,
): FaultPlan['pick'] {
  return (method) => {
    if (!methods.test(method)) return 'pass';
    let roll = random();
    for (const [fault, p] of Object.entries(odds) as Array<[Fault, number]>) {
      if (roll < p) return fault;
      roll -= p;
    }
    return 'pass';
  };
}

const textOf = (body: Buffer): { text?: string } => {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { text?: unknown; message_id?: unknown };
    return typeof parsed.text === 'string'
      ? { text: `${parsed.message_id ?? ''}:${parsed.text.slice(0, 60)}` }
      : {};
  } catch {
    return {};
  }
};

export async function startFaultProxy(target: string, plan: FaultPlan): Promise<FaultProxy> {
  const upstream = new URL(target);
  const injected: FaultProxy['injected'] = {};
  const calls: FaultProxy['calls'] = [];
  const count = (method: string, fault: Fault) => {
    const m = injected[method] ?? {};
    injected[method] = m;
    m[fault] = (m[fault] ?? 0) + 1;
  };
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const out = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    out.end(body);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const method = /\/bot[^/]+\/([A-Za-z]+)/.exec(req.url ?? '')?.[1] ?? '';
      const fault = plan.pick(method);
      count(method, fault);
      const body = Buffer.concat(chunks);
      calls.push({ at: Date.now(), method, fault, ...textOf(body) });
      const json = (status: number, data: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(data));
      };
      switch (fault) {
        case 'pass':
          return forward(req, res, body);
        case '429': {
          const after = plan.retryAfterS ?? 1;
          return json(429, {
            ok: false,
            error_code: 429,
            description: `Too Many Requests: retry after ${after}`,
            parameters: { retry_after: after },
          });
        }
        case '5xx':
          return json(502, { ok: false, error_code: 502, description: 'Bad Gateway' });
        case 'reset':
          req.socket.destroy();
          return;
        case 'slow':
          setTimeout(() => forward(req, res, body), plan.slowMs ?? 1500);
          return;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiRoot: `http://127.0.0.1:${port}`,
    injected,
    calls,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
