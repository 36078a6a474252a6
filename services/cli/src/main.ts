// The CLI's process entry: bin.js imports it (unbundled), or dist/bundle/main.cjs is its bundle (loaded with
// require(): a CommonJS entry needs none of Node's ES module loader, see docs/performance.md#start-up).
import { runCli } from './program.js';

// A reader that went away (`demiurge events --follow | head`) ends the output, not the process with a stack.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

// No top-level await: the bundle is CommonJS. runCli never rejects (it converts every error to an exit code).
void runCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
