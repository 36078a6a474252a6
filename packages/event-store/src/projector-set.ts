import type { RecordedEvent } from '@demiurge/contracts';
import { ProjectorFailedError, UnknownProjectorError } from './errors.js';
import type { ProjectionTx, Projector } from './projector.js';

/** The projectors a caller named (all when `names` is omitted); an unknown name is refused. */
export function selectProjectors(projectors: readonly Projector[], names?: readonly string[]): Projector[] {
  if (!names) return [...projectors];
  return names.map((name) => {
    const projector = projectors.find((p) => p.name === name);
    if (!projector)
      throw new UnknownProjectorError(
        name,
        projectors.map((p) => p.name),
      );
    return projector;
  });
}

/** Refuses two projectors with one name. */
export function assertDistinctProjectors(projectors: readonly Projector[]): void {
  const names = new Set<string>();
  for (const p of projectors) {
    if (names.has(p.name)) throw new Error(`two projectors are named ${p.name}`);
    names.add(p.name);
  }
}

/** Applies one event if the projector handles it, wrapping a failure in {@link ProjectorFailedError}. */
export function applyOne(projector: Projector, event: RecordedEvent, tx: ProjectionTx): void {
  if (!projector.handles.includes(event.type)) return;
  try {
    projector.apply(event, tx);
  } catch (cause) {
    throw new ProjectorFailedError(projector.name, event.type, event.position, { cause });
  }
}
