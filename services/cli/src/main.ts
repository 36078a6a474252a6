// The CLI's process entry: bin.js imports it (unbundled), or dist/bundle/main.js is its bundle.
import { runCli } from './program.js';

// A reader that went away (`demiurge events --follow | head`) ends the output, not the process with a stack.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

process.exitCode = await runCli(process.argv.slice(2));
