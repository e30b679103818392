// What process `shell` starts for one command: bash in the fixed dialect, inside the jail the probe
// found, or a refusal. Pure, so every combination of mode and probe result is table-tested.
import { describeJail, type HostJailMode, type JailStatus, jailArgv, unshareArgv } from './host-jail.ts';
import { type BashStatus, bashArgs } from './shell-dialect.ts';

export interface InvocationInput {
  bash: BashStatus;
  jail: JailStatus;
  mode: HostJailMode;
  command: string;
  /** Absolute real path of the workspace. */
  workspace: string;
  network: boolean;
  env: Readonly<Record<string, string>>;
  readOnly?: readonly string[];
  asRoot: boolean;
}

/** Which isolation the command got; reported in the result when it is less than the full jail. */
export type Isolation = 'bwrap' | 'unshare' | 'none';

export type Invocation =
  | { kind: 'run'; file: string; args: string[]; env: Record<string, string>; isolation: Isolation }
  | { kind: 'refused'; reason: string };

export function shellInvocation(input: InvocationInput): Invocation {
  const { bash, jail, mode } = input;
  if (bash.kind !== 'ok') return { kind: 'refused', reason: bash.reason };
  const shell = [bash.path, ...bashArgs(input.command)];
  if (mode === 'off' || jail.kind === 'none') {
    if (mode === 'required') {
      return {
        kind: 'refused',
        reason: `sandbox.host_jail is required but no jail works here: ${describeJail(jail, mode)}`,
      };
    }
    const [file = bash.path, ...args] = shell;
    return { kind: 'run', file, args, env: { ...input.env }, isolation: 'none' };
  }
  if (jail.kind === 'unshare') {
    if (mode === 'required') {
      return {
        kind: 'refused',
        reason: `sandbox.host_jail is required but only a partial jail works here: ${describeJail(jail, mode)}`,
      };
    }
    const args = [...unshareArgv({ ...input, bash: bash.path, setpriv: jail.setpriv }), ...shell];
    return { kind: 'run', file: jail.path, args, env: { ...input.env }, isolation: 'unshare' };
  }
  const spec = { workspace: input.workspace, network: input.network, env: input.env };
  const args = [...jailArgv(input.readOnly ? { ...spec, readOnly: input.readOnly } : spec), ...shell];
  // bwrap itself gets no environment: the command's is set with --setenv after --clearenv.
  return { kind: 'run', file: jail.path, args, env: {}, isolation: 'bwrap' };
}

/** The line appended to a result that ran with less than the full jail; empty when jailed or off. */
export function isolationNote(isolation: Isolation, mode: HostJailMode): string {
  if (mode === 'off' || isolation === 'bwrap') return '';
  return isolation === 'unshare'
    ? '[note: ran in a partial host jail (no bubblewrap); `steward doctor` explains]'
    : '[note: ran unjailed on the host (no bubblewrap); `steward doctor` explains]';
}
