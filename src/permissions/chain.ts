// The permission chain, first match wins and the order is the design:
// policy guard (deny) → exempt tools (allow) → danger classifier (shell) → standing grants
// (never score 3) → ask the owner.
import { resolve } from 'node:path';
import { relaxForContainer } from './container-relax.ts';
import { commandHosts, fetchHost, UNTAINTED, unknownHosts, urlHosts } from './egress.ts';
import {
  EXEMPT_TOOLS,
  type Grant,
  type GrantScope,
  type GrantStore,
  type OutsideToolPolicy,
  type PermissionCall,
  type PermissionGate,
  type Verdict,
} from './gate.ts';
import { judgeShell, MAX_JUDGED_LENGTH, safely } from './judge-shell.ts';
import type { Judgement } from './judgement.ts';
import { guardToolArgs, guardWritePath } from './policy-guard.ts';
import { isInterpreter, isShell } from './rules-interpreters.ts';

export interface ChainOptions {
  /** Root of the shell and file tools; absolute paths inside it are allowed. */
  workspace: string;
  grants: GrantStore;
  /** Tools that skip the classifier, grants and asking, by exact name. Default EXEMPT_TOOLS. */
  exempt?: ReadonlySet<string>;
  /** The network sandbox containers get; only under `none` does a container relax the classifier. */
  sandboxNetwork?: 'none' | 'bridge';
  /** The operator's rules for outside (MCP) tools by model name; undefined for any other tool. */
  outside?: (tool: string) => OutsideToolPolicy | undefined;
}

/** Programs a grant may never name: they run anything, so a grant on them would cover anything. */
const NEVER_GRANTED = new Set([
  'env',
  'sudo',
  'doas',
  'su',
  'pkexec',
  'eval',
  'exec',
  'source',
  '.',
  'xargs',
  'busybox',
]);

/** The narrow scopes "allow for this session" would store for a shell command, or undefined if none may. */
export function grantScopes(segments: Judgement[]): GrantScope[] | undefined {
  const scopes = new Map<string, GrantScope>();
  for (const s of segments) {
    if (s.score === 0) continue;
    if (s.score >= 3 || !s.program) return undefined;
    const { program } = s;
    const subcommand = s.subcommand ?? null;
    if (NEVER_GRANTED.has(program) || isShell(program) || isInterpreter(program)) return undefined;
    if (program === 'git' && subcommand === null) return undefined;
    const targets = grantTargets(s);
    if (!targets) return undefined;
    for (const target of targets) {
      scopes.set(`${program}\u0000${subcommand ?? ''}\u0000${target ?? ''}`, { program, subcommand, target });
    }
  }
  return [...scopes.values()];
}

/**
 * What a grant must match beyond program and subcommand, so it means what the owner saw: each host
 * (or git remote) a network program reaches, the exact arguments of a program no rule knows.
 * Undefined when no grant may cover it (a network program whose host could not be read).
 */
export function grantTargets(s: Judgement): Array<string | null> | undefined {
  if (s.network === null) return undefined;
  if (s.network) {
    const hosts = s.network.hosts.map((h) => `host ${h.toLowerCase()}`);
    const remotes = (s.network.remotes ?? []).map((r) => `remote ${r}`);
    const all = [...hosts, ...remotes];
    return all.length > 0 ? all : ['remote (default)'];
  }
  if (s.known === false) return s.grantKey ? [`exact ${s.grantKey}`] : undefined;
  return [null];
}

const scoreOf = (segments: Judgement[], scope: GrantScope) =>
  Math.max(
    ...segments
      .filter((s) => s.program === scope.program && (s.subcommand ?? null) === scope.subcommand)
      .map((s) => s.score),
  );

export function permissionChain(options: ChainOptions): PermissionGate {
  const workspace = resolve(options.workspace);
  const exempt = options.exempt ?? EXEMPT_TOOLS;
  const { grants } = options;

  return {
    async judge(call) {
      const { tool, args } = call;
      if (tool === 'shell') {
        const verdict = await judgeShellCall(call, args.command);
        if (typeof args.command !== 'string') return verdict;
        return egressGate(call, commandHosts(args.command), verdict);
      }
      const refused =
        tool === 'write_file' ? guardWritePath(args.path, workspace) : guardToolArgs(args, workspace);
      const canonical = JSON.stringify(args);
      if (refused) return { verdict: 'deny', layer: 'policy', score: 3, rationale: refused, canonical };
      if (tool === 'web_fetch') {
        const host = fetchHost(args);
        const asked = await egressGate(call, host ? [host] : [], undefined);
        if (asked) return { ...asked, canonical };
      }
      // Before the exempt list: an outside tool is never exempt, whatever its name.
      const outsider = options.outside?.(tool);
      // An outside tool may reach the network with what it is given: a URL in its arguments to a
      // host nobody named asks too, even for a tool the operator allowed.
      if (outsider)
        return egressGate(
          call,
          urlHosts(canonical),
          await judgeOutsideTool(grants, call, outsider, canonical),
        );
      if (exempt.has(tool)) {
        return {
          verdict: 'allow',
          layer: 'exempt',
          score: 0,
          rationale: `${tool} is exempt: it has its own guard`,
          canonical,
        };
      }
      const grant = { kind: 'tool', score: 2 } as const;
      if (await grants.covers(call.sessionId, tool, 2)) {
        return {
          verdict: 'allow',
          layer: 'grant',
          score: 2,
          rationale: `you allowed ${tool} for this session`,
          canonical,
          grant,
        };
      }
      return {
        verdict: 'ask',
        layer: 'ask',
        score: 2,
        rationale: `${tool} is not exempt, so the owner decides`,
        canonical,
        grant,
      };
    },

    async grant(call, key, tx) {
      switch (key?.kind) {
        case undefined:
        case 'none':
          return;
        case 'tool':
          await grants.add(call.sessionId, call.tool, key.score, undefined, tx);
          return;
        case 'shell':
          for (const { scope, score } of key.scopes) {
            await grants.add(call.sessionId, 'shell', score, scope, tx);
          }
          return;
        case 'hosts':
          for (const host of key.hosts) await grants.add(call.sessionId, EGRESS, 2, hostScope(host), tx);
          return;
      }
    },
  };

  /**
   * After untrusted content entered the session, a call reaching a host that neither the owner
   * nor an owner-approved call named asks first (unless "this host for the session" was granted).
   * Without `otherwise`, returns undefined when nothing needs asking.
   */
  async function egressGate<T extends Verdict | undefined>(
    call: PermissionCall,
    hosts: readonly string[],
    otherwise: T,
  ): Promise<Verdict | T> {
    if (otherwise?.verdict === 'deny') return otherwise;
    const unknown: string[] = [];
    for (const host of unknownHosts(call.egress ?? UNTAINTED, hosts)) {
      if (!(await grants.covers(call.sessionId, EGRESS, 2, hostScope(host)))) unknown.push(host);
    }
    if (unknown.length === 0) return otherwise;
    const named = unknown.join(', ');
    const rationale = `this session has read outside content, and ${call.tool} would reach ${named}, which neither you nor a call you approved named; outside text may be steering it to carry data out`;
    // A call that asks anyway keeps its own key; one that would have run asks about the hosts.
    if (otherwise?.verdict === 'ask')
      return { ...otherwise, rationale: `${otherwise.rationale}; also ${rationale}` };
    return {
      verdict: 'ask',
      layer: 'egress',
      score: Math.max(2, otherwise?.score ?? 0),
      rationale,
      ...(otherwise?.canonical !== undefined ? { canonical: otherwise.canonical } : {}),
      grant: { kind: 'hosts', hosts: unknown },
    };
  }

  function containerVerdict(call: PermissionCall, relaxed: Verdict): Promise<Verdict> {
    return containerVerdictWith(grants, call, relaxed);
  }

  /** One parse per judgement: the verdict carries the grant key, so a grant never parses again. */
  async function judgeShellCall(call: PermissionCall, command: unknown): Promise<Verdict> {
    const { sessionId } = call;
    if (typeof command !== 'string' || command.length > MAX_JUDGED_LENGTH || command.trim() === '') {
      return judgeShell(command as string, workspace);
    }
    const { verdict, analysis } = safely(command, workspace);
    if (analysis && call.runsIn === 'container' && options.sandboxNetwork === 'none') {
      const relaxed = relaxForContainer({
        verdict,
        command,
        segments: analysis.classification.segments,
        otherScopes: grantScopes,
      });
      if (relaxed) return containerVerdict(call, relaxed);
    }
    if (verdict.verdict !== 'ask' || verdict.score >= 3 || !analysis) return verdict;
    const { segments } = analysis.classification;
    const scopes = grantScopes(segments);
    if (!scopes || scopes.length === 0) return verdict;
    const key = {
      kind: 'shell',
      scopes: scopes.map((scope) => ({ scope, score: scoreOf(segments, scope) })),
    } as const;
    for (const { scope, score } of key.scopes) {
      if (!(await grants.covers(sessionId, 'shell', score, scope))) return { ...verdict, grant: key };
    }
    const names = scopes.map(describeScope).join(', ');
    return {
      ...verdict,
      verdict: 'allow',
      layer: 'grant',
      rationale: `you allowed ${names} for this session`,
      grant: key,
    };
  }
}

/**
 * A relaxed container verdict: allowed when the session's grants cover it; in an unattended turn
 * that has read nothing from outside, allowed too (the owner's own digest prompt asked for it, and
 * nobody is there to grant it); otherwise it asks at score 2.
 */
async function containerVerdictWith(
  grants: GrantStore,
  call: PermissionCall,
  relaxed: Verdict,
): Promise<Verdict> {
  const key = relaxed.grant;
  if (key?.kind === 'shell') {
    let covered = true;
    for (const { scope, score } of key.scopes) {
      if (!(await grants.covers(call.sessionId, 'shell', score, scope))) covered = false;
    }
    if (covered) {
      const names = key.scopes.map(({ scope }) => describeScope(scope)).join(', ');
      return {
        ...relaxed,
        verdict: 'allow',
        layer: 'grant',
        rationale: `you allowed ${names} in the sandbox for this session`,
      };
    }
  }
  if (call.unattended && !(call.egress ?? UNTAINTED).tainted) {
    return {
      ...relaxed,
      verdict: 'allow',
      layer: 'classifier',
      rationale: `${relaxed.rationale}; unattended and untainted, so it runs there`,
    };
  }
  return relaxed;
}

/**
 * An MCP tool: the operator's `allow` list runs it, a session grant on that one tool runs it,
 * anything else asks, showing the owner the server, the tool and (as `canonical`) every argument.
 * What the server claims about the tool is said in the question and changes nothing.
 */
export async function judgeOutsideTool(
  grants: GrantStore,
  call: PermissionCall,
  policy: OutsideToolPolicy,
  canonical: string,
): Promise<Verdict> {
  const grant = { kind: 'tool', score: 2 } as const;
  const what = `${call.tool} is the tool ${JSON.stringify(policy.tool)} of the MCP server ${policy.server}`;
  if (policy.allowed) {
    return {
      verdict: 'allow',
      layer: 'grant',
      score: 2,
      rationale: `${what}, which the operator allowed in mcp.servers.${policy.server}.allow`,
      canonical,
    };
  }
  if (await grants.covers(call.sessionId, call.tool, 2)) {
    return {
      verdict: 'allow',
      layer: 'grant',
      score: 2,
      rationale: `you allowed ${call.tool} for this session`,
      canonical,
      grant,
    };
  }
  const claims =
    policy.claims.length > 0
      ? `; the server calls it ${policy.claims.join(', ')}, a claim nobody checked, so it grants nothing`
      : '';
  return { verdict: 'ask', layer: 'ask', score: 2, rationale: `${what}${claims}`, canonical, grant };
}

/** The grants table's tool for "this host for the session"; the host is its program column. */
export const EGRESS = 'egress';
const hostScope = (host: string): GrantScope => ({ program: host, subcommand: null });

const describeScope = (scope: GrantScope) =>
  [scope.program, scope.subcommand, scope.target ? `(${scope.target})` : null].filter(Boolean).join(' ');

/** One line for /grants: "3f2a1b7c  shell: git add (score ≤ 1) until 21:04 UTC". */
export function describeGrant(grant: Grant): string {
  const what =
    grant.tool === EGRESS
      ? `any tool, to the host ${grant.program}`
      : grant.program
        ? `${grant.tool}: ${describeScope(grant as GrantScope)}`
        : grant.tool;
  const until = grant.expiresAt.toISOString().slice(11, 16);
  return `${grant.id.slice(0, 8)}  ${what} (score ≤ ${grant.maxScore}) until ${until} UTC`;
}
