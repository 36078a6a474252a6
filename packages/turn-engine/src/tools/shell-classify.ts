import type { EffectClass } from '../tool.js';

/**
 * Commands that only read, when given no argument that reaches outside the working directory (no absolute
 * path, `~` or `..`) and, for some, none of the options that write or run other programs (see
 * {@link FORBIDDEN_OPTIONS}). Deliberately small: a command missing here just needs an approval.
 */
const READ_ONLY_COMMANDS = new Set([
  'basename',
  'cat',
  'cd',
  'diff',
  'dirname',
  'du',
  'echo',
  'egrep',
  'fgrep',
  'find',
  'grep',
  'head',
  'ls',
  'pwd',
  'realpath',
  'rg',
  'stat',
  'tail',
  'true',
  'wc',
  'which',
]);

/** Options that make an otherwise read-only command write files or run other programs. */
const FORBIDDEN_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  find: ['-delete', '-exec', '-execdir', '-ok', '-okdir', '-fprint', '-fprint0', '-fprintf', '-fls'],
  rg: ['--pre', '--hostname-bin'],
};

/** git subcommands that only read (given no option from {@link GIT_FORBIDDEN_OPTIONS}). */
const READ_ONLY_GIT = new Set(['blame', 'diff', 'grep', 'log', 'ls-files', 'rev-parse', 'shortlog', 'show', 'status']);

/** git options that write a file (`--output`), run a configured program or open a pager. */
const GIT_FORBIDDEN_OPTIONS = ['--output', '--ext-diff', '--open-files-in-pager', '-O'];

/** `git branch` options that change branches; anything else there lists them. */
const GIT_BRANCH_WRITES = new Set([
  '-d',
  '-D',
  '-m',
  '-M',
  '-c',
  '-C',
  '-f',
  '-u',
  '-t',
  '--delete',
  '--move',
  '--copy',
  '--force',
  '--set-upstream-to',
  '--unset-upstream',
  '--edit-description',
  '--track',
  '--no-track',
]);

const SEVERITY: Readonly<Record<'read' | 'git' | 'shell', number>> = { read: 0, git: 1, shell: 2 };

/**
 * The effect class of a shell command, conservatively: `read` when every command in it (split on `;`,
 * `&&`, `||`, `|` and newlines) is a known read-only command, with no redirection, substitution, expansion,
 * subshell, background `&` or comment anywhere; `git` when the worst of them is a git command that may
 * write; `shell` for everything else (including anything this parser does not understand).
 *
 * @example
 * ```ts
 * classifyShellCommand('git status && ls src'); // 'read'
 * classifyShellCommand('git commit -m wip');    // 'git'
 * classifyShellCommand('echo hi > notes.txt');  // 'shell'
 * ```
 */
export function classifyShellCommand(command: string): Extract<EffectClass, 'read' | 'git' | 'shell'> {
  const commands = splitSimpleCommands(command);
  if (commands === undefined || commands.length === 0) return 'shell';
  let worst: 'read' | 'git' | 'shell' = 'read';
  for (const argv of commands) {
    const effect = classifyArgv(argv);
    if (SEVERITY[effect] > SEVERITY[worst]) worst = effect;
  }
  return worst;
}

function classifyArgv([name = '', ...args]: readonly string[]): 'read' | 'git' | 'shell' {
  if (name === 'git') return gitReads(args) ? 'read' : 'git';
  if (!READ_ONLY_COMMANDS.has(name) || args.some(reachesOutside)) return 'shell';
  if (name === 'cd' && (args.length !== 1 || args[0] === '-')) return 'shell'; // bare `cd` goes to $HOME
  const forbidden = FORBIDDEN_OPTIONS[name] ?? [];
  return args.some((arg) => forbidden.some((option) => arg === option || arg.startsWith(`${option}=`)))
    ? 'shell'
    : 'read';
}

function gitReads(args: readonly string[]): boolean {
  // A global option before the subcommand (`-c core.pager=…`, `-C /elsewhere`) is never read-only here.
  const rest = args[0] === '--no-pager' ? args.slice(1) : args;
  const [sub = '', ...subArgs] = rest;
  if (subArgs.some(reachesOutside)) return false;
  if (subArgs.some((arg) => GIT_FORBIDDEN_OPTIONS.some((o) => arg === o || arg.startsWith(o)))) return false;
  if (READ_ONLY_GIT.has(sub)) return true;
  if (sub === 'branch') {
    if (subArgs.some((arg) => GIT_BRANCH_WRITES.has(arg.split('=')[0] ?? arg))) return false;
    const listing = subArgs.includes('--list') || subArgs.includes('-l');
    return listing || subArgs.every((arg) => arg.startsWith('-'));
  }
  if (sub === 'remote') return subArgs.every((arg) => arg === '-v' || arg === '--verbose');
  return false;
}

/**
 * An argument that may name something outside the working directory: absolute, `~`, through `..`, or a
 * glob segment like `.*` that the shell also expands to `..`.
 */
function reachesOutside(arg: string): boolean {
  const values = [arg];
  if (arg.startsWith('-')) {
    const eq = arg.indexOf('=');
    if (eq !== -1) values.push(arg.slice(eq + 1));
    if (!arg.startsWith('--')) values.push(arg.slice(2)); // `-f/etc/x`: a short option with its value attached
  }
  return values.some(
    (v) =>
      v.startsWith('/') ||
      v.startsWith('~') ||
      v.split(/[/=]/).some((segment) => segment === '..' || /^\.[*?[]/.test(segment)),
  );
}

/**
 * Splits a command line into simple commands (argv lists, quotes removed). Returns `undefined` for anything
 * beyond plain words and the separators `;`, `&&`, `||`, `|`, newline: redirections, `$` expansions,
 * backquotes, subshells, a background `&`, comments, an unterminated quote.
 */
export function splitSimpleCommands(line: string): string[][] | undefined {
  const commands: string[][] = [];
  let argv: string[] = [];
  let word: string | undefined;
  const endWord = (): void => {
    if (word !== undefined) argv.push(word);
    word = undefined;
  };
  const endCommand = (): void => {
    endWord();
    if (argv.length > 0) commands.push(argv);
    argv = [];
  };
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i] ?? '';
    const next = line[i + 1];
    if (c === "'") {
      const close = line.indexOf("'", i + 1);
      if (close === -1) return undefined;
      word = (word ?? '') + line.slice(i + 1, close);
      i = close;
    } else if (c === '"') {
      let text = '';
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j += 1) {
        const d = line[j] ?? '';
        if (d === '$' || d === '`') return undefined;
        if (d === '\\' && j + 1 < line.length && '"\\\n'.includes(line[j + 1] ?? '')) {
          j += 1;
          text += line[j] === '\n' ? '' : line[j];
        } else {
          text += d;
        }
      }
      if (j >= line.length) return undefined;
      word = (word ?? '') + text;
      i = j;
    } else if (c === '\\') {
      if (next === undefined) return undefined;
      if (next !== '\n') word = (word ?? '') + next;
      i += 1;
    } else if (c === ' ' || c === '\t') {
      endWord();
    } else if (c === ';' || c === '\n') {
      endCommand();
    } else if (c === '|' || (c === '&' && next === '&')) {
      if (next === c) i += 1;
      endCommand();
    } else if ('&<>()`$#{}'.includes(c)) {
      return undefined;
    } else {
      word = (word ?? '') + c;
    }
  }
  endCommand();
  return commands;
}
