import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** Whether tmux is installed (the TUI tests are skipped, saying so, when it is not). */
export function hasTmux(): boolean {
  return spawnSync('tmux', ['-V'], { stdio: 'ignore' }).status === 0;
}

/** The environment variables by which a program (Ink's `is-in-ci`) decides that it runs in CI. */
const CI_VARIABLES = ['CI', 'CONTINUOUS_INTEGRATION', 'BUILD_NUMBER', 'RUN_ID'];

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

export interface TmuxTerminalOptions {
  /**
   * Reads what the program shows as typed so far (its input box) off the screen: {@link TmuxTerminal.submit}
   * then presses Enter only once the text is shown there.
   */
  readonly inputBox?: (screen: string) => string | undefined;
}

/**
 * A terminal program in a detached tmux session on a private server (`tmux -L`): keys in with `send-keys`,
 * the screen out with `capture-pane`. After the program exits its pane shows `[exit N]`.
 */
export class TmuxTerminal {
  private readonly socket: string;

  constructor(
    readonly name: string,
    command: readonly string[],
    env: Readonly<Record<string, string>>,
    cwd: string,
    private readonly options: TmuxTerminalOptions = {},
  ) {
    this.socket = `demiurge-test-${process.pid}-${name}`;
    const vars = Object.entries(env).map(([k, v]) => `${k}=${quote(v)}`);
    // A person's terminal, not a CI job: Ink (the TUI's renderer) draws only its last frame when it sees a CI
    // variable, so the ones it looks at are unset for the program.
    const unset = CI_VARIABLES.map((name) => `-u ${name}`).join(' ');
    const line = `cd ${quote(cwd)} && env ${unset} ${vars.join(' ')} ${command.map(quote).join(' ')}; echo "[exit $?]"; sleep 600`;
    this.tmux(['new-session', '-d', '-s', name, '-x', '120', '-y', '50', line]);
  }

  private tmux(args: readonly string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }

  /** The visible screen and its scrollback. */
  screen(): string {
    return this.tmux(['capture-pane', '-p', '-J', '-S', '-2000', '-t', this.name]);
  }

  /**
   * Types text (literally), then Enter as its own key so the program reads it as a submit, not as a pasted
   * newline. A program that reads the text and the Enter in one read sees `text\r`, one paste (Ink's input
   * does), so Enter waits until the input box shows the text (with {@link TmuxTerminalOptions.inputBox}; a
   * program busy past a fixed pause, a freshly started one under load, would otherwise read both at once),
   * else 400 ms.
   */
  async submit(text: string): Promise<void> {
    this.tmux(['send-keys', '-t', this.name, '-l', text]);
    const { inputBox } = this.options;
    if (inputBox) await this.waitFor((screen) => inputBox(screen) === text, 15_000);
    else await sleep(400);
    this.tmux(['send-keys', '-t', this.name, 'Enter']);
  }

  key(name: string): void {
    this.tmux(['send-keys', '-t', this.name, name]);
  }

  /** Waits until the screen matches; fails with the screen in the message. */
  async waitFor(test: RegExp | ((screen: string) => boolean), timeoutMs = 30_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let screen = '';
    while (Date.now() < deadline) {
      screen = this.screen();
      if (typeof test === 'function' ? test(screen) : test.test(screen)) return screen;
      await sleep(150);
    }
    // The screen's end first (where the program is): a log may keep only a failure's first lines.
    const lines = screen.split('\n').filter((line) => line.trim() !== '');
    throw new Error(
      `the terminal never showed ${String(test)} in ${timeoutMs} ms; its last lines:\n${lines.slice(-12).join('\n')}` +
        `\n--- the whole screen ---\n${screen}`,
    );
  }

  /**
   * The pane's processes, its program and every descendant, one per line with pid, state, kernel wait channel,
   * CPU time and command (/proc, else `ps`): what a program that stopped answering is doing. Says why when it
   * cannot.
   */
  processes(): string[] {
    try {
      return this.processTree().map(({ line }) => line.slice(0, 220));
    } catch (error) {
      return [`(the pane's processes could not be listed: ${(error as Error).message.split('\n')[0]})`];
    }
  }

  /** The pid of the pane's process whose command line matches `command`; throws when there is none. */
  pidOf(command: RegExp): number {
    const found = this.processTree().find(({ args }) => command.test(args));
    if (!found) throw new Error(`no process of the terminal ${this.name} runs ${String(command)}`);
    return found.pid;
  }

  private processTree(): ProcessRow[] {
    const root = Number(this.tmux(['list-panes', '-t', this.name, '-F', '#{pane_pid}']).trim());
    const rows = existsSync('/proc/self/stat') ? procRows() : psRows();
    const inTree = new Set([root]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const { pid, ppid } of rows) {
        if (inTree.has(pid) || !inTree.has(ppid)) continue;
        inTree.add(pid);
        grew = true;
      }
    }
    return rows.filter(({ pid }) => inTree.has(pid));
  }

  close(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server'], { stdio: 'ignore' });
  }
}

interface ProcessRow {
  readonly pid: number;
  readonly ppid: number;
  readonly args: string;
  /** pid, ppid, state, kernel wait channel, CPU time, command. */
  readonly line: string;
}

/** Every process, from /proc (Linux: nothing to install). */
function procRows(): ProcessRow[] {
  const rows: ProcessRow[] = [];
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      // `pid (comm) state ppid …`, utime and stime the 14th and 15th fields; comm may hold spaces.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state = '?', ppid = '0', ...rest] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(rest[9]) + Number(rest[10])) / 100; // clock ticks: 100 a second on Linux
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      const wchan = readFileSync(`/proc/${entry}/wchan`, 'utf8').trim() || '-';
      const line = `${entry} ${ppid} ${state} ${wchan} ${seconds.toFixed(2)}s ${args}`;
      rows.push({ pid: Number(entry), ppid: Number(ppid), args, line });
    } catch {
      // It exited while being read.
    }
  }
  return rows;
}

/** Every process, from `ps` (where there is no /proc). */
function psRows(): ProcessRow[] {
  return execFileSync('ps', ['-e', '-o', 'pid=,ppid=,stat=,wchan:24=,time=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((raw) => {
      const line = raw.trim();
      const fields = line.split(/\s+/);
      return { line, pid: Number(fields[0]), ppid: Number(fields[1]), args: fields.slice(5).join(' ') };
    });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
