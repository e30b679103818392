// The markers the scan leaves in a command for later steps, and the shapes it hands over.
// Control characters, so they cannot come from the command itself (the scan replaces any).

/** Around a variable's name where the shell expands it: `$x` becomes VAR_OPEN + 'x' + VAR_CLOSE. */
export const VAR_OPEN = '\u0001';
export const VAR_CLOSE = '\u0002';
/** Before a word part written in ANSI-C quoting ($'…'). */
export const ANSI_MARK = '\u0005';
/** Before an unquoted `{` that starts a brace expansion ({a,b} or {1..3}). */
export const BRACE_MARK = '\u0006';
/** Before a word shell-quote saw as an unquoted glob (`*.ts`, `id_?`). */
export const GLOB_MARK = '\u0003';
/** A here-document's delimiter is replaced by this mark and its index in `heredocs`. */
export const HEREDOC_MARK = '\u0007';

export interface HereDoc {
  delimiter: string;
  /** A quoted delimiter turns expansion off in the body. */
  quoted: boolean;
  strip: boolean;
  body: string;
}

export interface Scan {
  /** The command rewritten for shell-quote. */
  text: string;
  /** Constructs the classifier cannot see through, as short phrases. */
  opaque: string[];
  /** Commands that run inside substitutions, rewritten the same way; judged as extra segments. */
  inner: string[];
  heredocs: HereDoc[];
}

export const sentinel = (name: string): string => VAR_OPEN + name + VAR_CLOSE;

/** The scan's working state, shared by nested scans. */
export interface Context extends Scan {
  /** Here-documents opened on the current line, read at its end. */
  pending: number[];
}

/** Records a construct the classifier cannot see through (once). */
export const opaque = (ctx: Context, what: string): void => {
  if (!ctx.opaque.includes(what)) ctx.opaque.push(what);
};
