import type { EventStore } from '@demiurge/event-store';
import type { ProjectionSummary } from '../render.js';

/** Each projector's checkpoint and the number of documents in each of its collections. */
export async function summarizeProjections(store: EventStore): Promise<ProjectionSummary[]> {
  const out: ProjectionSummary[] = [];
  for (const name of store.projectorNames) {
    const reader = store.projection(name);
    const dump = await reader.dump();
    const collections = Object.fromEntries(Object.entries(dump).map(([c, docs]) => [c, Object.keys(docs).length]));
    out.push({ ...(await reader.checkpoint()), collections });
  }
  return out;
}
