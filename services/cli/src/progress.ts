import cliProgress from 'cli-progress';

/** A progress bar over a count (log positions, events...). */
export interface ProgressBar {
  update(value: number, total: number): void;
  stop(): void;
}

/**
 * A bar drawn on `terminal` (cli-progress), or `undefined` when there is none: off a TTY a command prints
 * its one summary line instead.
 * @example
 * const bar = progressBar(io.progress, 'rebuild');
 * bar?.update(position, head);
 * bar?.stop();
 */
export function progressBar(terminal: NodeJS.WriteStream | undefined, label: string): ProgressBar | undefined {
  if (!terminal?.isTTY) return undefined;
  const bar = new cliProgress.SingleBar(
    {
      stream: terminal,
      format: `${label} [{bar}] {percentage}% | {value}/{total} | {duration_formatted}`,
      hideCursor: true,
      clearOnComplete: false,
      fps: 10,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(value, total) {
      if (!started) {
        bar.start(total, value);
        started = true;
        return;
      }
      bar.setTotal(total);
      bar.update(value);
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
