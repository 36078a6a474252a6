import { execFileSync, spawnSync } from 'node:child_process';

/** Whether tmux is installed (the TUI tests are skipped, saying so, when it is not). */
export function hasTmux(): boolean {
  return spawnSync('tmux', ['-V'], { stdio: 'ignore' }).status === 0;
}

/** The environment variables by which a program (Ink's `is-in-ci`) decides that it runs in CI. */
const CI_VARIABLES = ['CI', 'CONTINUOUS_INTEGRATION', 'BUILD_NUMBER', 'RUN_ID'];

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

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

  /** Types text (literally), then Enter as its own key so the TUI reads it as a submit, not a pasted newline. */
  async submit(text: string): Promise<void> {
    this.tmux(['send-keys', '-t', this.name, '-l', text]);
    await sleep(400);
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

  close(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server'], { stdio: 'ignore' });
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
