import { runInProcessGroup } from './process-group.js';

/** A shell word: the text in single quotes, each quote closed, escaped and reopened. */
function shellWord(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * Runs one test file with `node --test` in its own process group (the same process handling as the shell tool
 * and `terminal.exec`: a timeout stops the whole tree). Resolves with the failure's last lines, or undefined
 * when it passed. Used by an Agent Core's check (`checkCore({ runTest })`).
 */
export async function runNodeTestFile(cwd: string, file: string, timeoutMs: number): Promise<string | undefined> {
  let output = '';
  const result = await runInProcessGroup({
    command: `${shellWord(process.execPath)} --test ${shellWord(file)}`,
    cwd,
    timeoutMs,
    signal: new AbortController().signal,
    onOutput: (chunk) => {
      output += chunk.toString();
    },
  });
  if (result.exitCode === 0) return undefined;
  if (result.timedOut) return `stopped after ${timeoutMs} ms`;
  const tail = output.trim().split('\n').slice(-3).join(' | ');
  return `exited ${result.exitCode ?? result.signal}${tail ? `: ${tail}` : ''}`;
}
