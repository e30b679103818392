// Setting a variable before a command (or on its own) can change what runs: PATH, LD_PRELOAD,
// GIT_PAGER, BASH_ENV… These are scored like the commands they redirect.
import { type Judgement, judged } from './judgement.ts';

const SAFE_ENV =
  /^(?:LANG|LANGUAGE|LC_[A-Z]+|TZ|COLUMNS|LINES|NO_COLOR|FORCE_COLOR|CLICOLOR(?:_FORCE)?|TERM)$/;
const DANGEROUS_ENV =
  /^(?:PATH|IFS|ENV|BASH_ENV|BASH_FUNC_.*|CDPATH|HOME|SHELL|SHELLOPTS|BASHOPTS|PS[0-4]|PROMPT_COMMAND|GLOBIGNORE|TMPDIR|EDITOR|VISUAL|PAGER|BROWSER|LD_.*|DYLD_.*|GCONV_PATH|LOCPATH|NLSPATH|HOSTALIASES|MALLOC_.*|GIT_.*|SSH_.*|.*_PAGER|MAN.*|LESS.*|PYTHON.*|PERL.*|RUBY.*|NODE_.*|[Nn][Pp][Mm]_[Cc][Oo][Nn][Ff][Ii][Gg]_.*|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|CLASSPATH|GEM_.*|BUNDLE_.*|CARGO_.*|RUSTC.*|RUSTFLAGS|GOFLAGS|CC|CXX|LDFLAGS|CFLAGS|MAKEFLAGS|TAR_OPTIONS|GREP_OPTIONS|GZIP|XZ_OPT|BZIP2?|TERMINFO|XDG_.*|SUDO_.*|DOCKER_.*|KUBECONFIG|AWS_.*|PIP_.*|UV_.*|CURL_HOME|WGETRC|SSL_.*|OPENSSL_.*|[Hh][Tt][Tt][Pp][Ss]?_[Pp][Rr][Oo][Xx][Yy]|[Aa][Ll][Ll]_[Pp][Rr][Oo][Xx][Yy])$/;

/** How much setting NAME (before a command or on its own) can change what runs. */
export function assignmentScore(name: string): Judgement {
  if (SAFE_ENV.test(name)) return judged(0, `sets ${name}`);
  if (DANGEROUS_ENV.test(name)) return judged(3, `sets ${name}, which can change what commands run`);
  if (/^[a-z_][a-z0-9_]*$/.test(name)) return judged(0, `sets ${name}`);
  return judged(1, `sets ${name} for the command`);
}
