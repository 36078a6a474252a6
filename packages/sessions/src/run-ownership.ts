import type { Actor } from '@demiurge/contracts';

/** The admin CLI's principal (`demiurge runs cancel` and the other admin commands). */
export const ADMIN_CLI_ACTOR: Actor = { kind: 'operator', id: 'cli' };

/**
 * Who may cancel a run (seed scenario 55), given who started it (`principal`, null for runs recorded before
 * principals were) and the run's session:
 * - the principal that started it (same kind and id);
 * - the host itself (`system`: shutdown, recovery, a task worker stopping a child agent);
 * - an operator with the admin CLI ({@link ADMIN_CLI_ACTOR});
 * - a model acting in a session (`agent`, id = its session) for runs of that same session, and for runs it
 *   started itself (its delegated children's runs);
 * - anyone, for a run with no recorded principal.
 * Everyone else (another operator client, another user, a schedule, a model of another session) is refused.
 *
 * @example
 * ```ts
 * mayCancelRun({ kind: 'operator', id: 'tui' }, 'ses_1', { kind: 'operator', id: 'other' }); // false
 * ```
 */
export function mayCancelRun(principal: Actor | null, sessionId: string | null, by: Actor): boolean {
  if (principal === null || by.kind === 'system') return true;
  if (by.kind === ADMIN_CLI_ACTOR.kind && by.id === ADMIN_CLI_ACTOR.id) return true;
  if (by.kind === 'agent' && sessionId !== null && by.id === sessionId) return true;
  return by.kind === principal.kind && by.id === principal.id;
}
