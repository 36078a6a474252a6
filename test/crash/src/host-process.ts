import { type HostProcess, type StartHostOptions, startHost as startCliHost } from '@demiurge/cli';

// The real host as a child process, started exactly as `demiurge sweep` starts it; the crash suites keep
// `DEMIURGE_STORE_URL` (their PostgreSQL project runs every host on the test server).
export type { HostExit, HostProcess, ReadyLine, StartHostOptions } from '@demiurge/cli';

export function startHost(home: string, options: StartHostOptions): Promise<HostProcess> {
  return startCliHost(home, { keepStoreUrl: true, ...options });
}
