import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { asDomainEvent } from '@demiurge/contracts';
import type { EventStore } from '@demiurge/event-store';
import { Invariant, type InvariantFinding } from './invariants.js';

/**
 * Every turn pinned to a core revision (`turn.started` with `core.revision`) names a revision the log recorded
 * (`core.revision_saved` before it) whose snapshot is still in the home's core store (`coreStore`: its
 * manifest, or a materialised checkout). One finding per turn that does not.
 */
export async function checkPinnedRevisions(store: EventStore, coreStore: string): Promise<InvariantFinding[]> {
  const findings: InvariantFinding[] = [];
  const recorded = new Set<string>();
  const stored = new Map<string, boolean>();
  const isStored = (revision: string) => {
    let yes = stored.get(revision);
    if (yes === undefined) {
      yes =
        existsSync(join(coreStore, 'revisions', `${revision}.json`)) ||
        existsSync(join(coreStore, 'checkouts', revision));
      stored.set(revision, yes);
    }
    return yes;
  };
  for await (const recordedEvent of store.iterate({ types: ['core.revision_saved', 'turn.started'] })) {
    const event = asDomainEvent(recordedEvent);
    if (event.type === 'core.revision_saved') {
      recorded.add(event.data.revision);
      continue;
    }
    if (event.type !== 'turn.started') continue;
    const { turnId, core } = event.data;
    const revision = core?.revision;
    if (!core || !revision) continue;
    const found = (what: string) =>
      findings.push({
        invariant: Invariant.pinnedRevisionsExist,
        subject: turnId,
        message: `turn ${turnId} is pinned to revision ${revision.slice(0, 12)} of core ${core.coreId}, ${what}`,
      });
    if (!recorded.has(revision)) found('which no core.revision_saved before it records');
    else if (!isStored(revision)) found(`whose snapshot is gone from ${coreStore}`);
  }
  return findings;
}
