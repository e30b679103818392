// The shell tool runs with HOME set to the workspace, so every dotfile there is some program's
// user configuration: ~/.curlrc can add `-o` or `upload-file`, ~/.wgetrc `post_file`, ~/.ssh/config
// a ProxyCommand, ~/.gitconfig an alias or diff.external, ~/.lesskey shell commands. Two pure
// halves: `shellSafetyEnv` points the programs the classifier lets run freely away from those
// files, and `isHomeConfigPath` names them so writes to them are never plain writes.
import { gitSafetyEnv, isGitControlPath, mayNameDotfile } from './git-safety.ts';

/** Files and folders (first path component) that configure programs when they sit in HOME. */
const HOME_CONFIG = new Set(
  `.curlrc .wgetrc .netrc .ssh .gnupg .config .local .lesskey .less .lesshst .ackrc .jq .digrc
   .sqliterc .psqlrc .my.cnf .mysql_history .npmrc .yarnrc .yarnrc.yml .pip .pypirc .condarc
   .gemrc .bundle .cargo .rustup .docker .kube .aws .bashrc .bash_profile .bash_login .bash_logout
   .profile .zshrc .zshenv .zprofile .inputrc .vimrc .vim .exrc .nanorc .emacs .emacs.d .tmux.conf
   .screenrc .gdbinit .lldbinit .pythonrc .pythonstartup .irbrc .pryrc .perldl .Rprofile .octaverc
   .mailrc .muttrc .hgrc .subversion .terraformrc .manpath .selected_editor .xinitrc .xprofile
   .Xresources .Xdefaults`.split(/\s+/),
);

/**
 * Whether writing `path` (relative to the working folder, or absolute) can change what a program
 * run later does: git control files, or a HOME configuration file named above. Any component
 * counts, so `sub/.ssh/config` does too: a command can `cd` first.
 */
export function isHomeConfigPath(path: string): boolean {
  if (!mayNameDotfile(path)) return false;
  if (isGitControlPath(path)) return true;
  return path.split(/[/\\]+/).some((part) => HOME_CONFIG.has(part.replace(/[. ]+$/, '') || part));
}

/**
 * Everything the shell tool should add to the environment of each command (pure): the git
 * safety configuration, and variables that make curl, wget, less and bat ignore HOME
 * configuration. `existing` is the environment being extended (for GIT_CONFIG_COUNT).
 */
export function shellSafetyEnv(
  existing: Readonly<Record<string, string | undefined>> = {},
  gitGlobalConfig = '/dev/null',
): Record<string, string> {
  return {
    ...gitSafetyEnv(existing, gitGlobalConfig),
    // curl reads $CURL_HOME/.curlrc; /dev/null/.curlrc cannot exist.
    CURL_HOME: '/dev/null',
    WGETRC: '/dev/null',
    LESSKEYIN: '/dev/null',
    LESSSECURE: '1',
    LESSHISTFILE: '-',
    BAT_CONFIG_PATH: '/dev/null',
    PAGER: 'cat',
    MANPAGER: 'cat',
  };
}
