export { type HomePaths, resolveHome } from './home.js';
export type { CommandIo } from './io.js';
export { runCli } from './program.js';
export { openRuntimeStore, runtimeProjectors } from './runtime-store.js';
export { appendSampleSession } from './sample-session.js';
