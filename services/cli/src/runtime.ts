import type { Clock } from '@demiurge/contracts';
import { ADMIN_OWNER, type AdminRuntime, createAdminRuntime, type HostStore } from '@demiurge/host';

/** Who the CLI's writes are recorded as (the run and work owner, the event actor). */
export const CLI_OWNER = ADMIN_OWNER;

/** The runtimes an admin command uses, on one store, acting as {@link CLI_OWNER}. */
export type CliRuntime = AdminRuntime<HostStore>;

/** The host's admin runtime ({@link createAdminRuntime}) on an open store, as the operator surface `cli`. */
export function cliRuntime(store: HostStore, clock?: Clock): CliRuntime {
  return createAdminRuntime(store, { owner: CLI_OWNER, ...(clock ? { clock } : {}) });
}
