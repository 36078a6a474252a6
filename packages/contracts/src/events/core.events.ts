import { z } from 'zod';
import { TaskId } from '../ids.js';
import { defineEvent } from '../registry.js';

/** A core revision: the sha-256 (64 hex digits) of its snapshot's manifest (docs/core-revisions.md). */
export const CoreRevision = z.string().regex(/^[0-9a-f]{64}$/, 'expected a 64-digit hex core revision');
export type CoreRevision = z.infer<typeof CoreRevision>;

/** The stream of a core's revisions: `core:<coreId>` (stream type `core`). */
export const coreStreamId = (coreId: string): string => `core:${coreId}`;

/** A core's revision history began: recorded once, in the commit of its first revision (or first evolve claim). */
export const CoreRegistered = defineEvent({
  type: 'core.registered',
  schemaVersion: 1,
  description:
    "An Agent Core's revision history began (committed with its first core.revision_saved, or with the first core.evolve_claimed of an unversioned core).",
  data: () => z.object({ coreId: z.string().min(1) }),
});

/**
 * A core revision became current: its snapshot (content-addressed under the home) was written first, so the
 * revision this event names always exists when the event does. `parent` is the revision current before it.
 */
export const CoreRevisionSaved = defineEvent({
  type: 'core.revision_saved',
  schemaVersion: 1,
  description:
    'An Agent Core revision (an immutable, content-addressed snapshot) became current: saved from the working copy, rolled back to, or proposed by an evolve task; who saved it is the actor, why is the message.',
  data: () =>
    z.object({
      coreId: z.string().min(1),
      revision: CoreRevision,
      parent: CoreRevision.nullable(),
      message: z.string().min(1),
      /** `save` from a working copy, `rollback` to an older revision (`restoredFrom`), `evolve` by a task (`taskId`). */
      reason: z.enum(['save', 'rollback', 'evolve']),
      restoredFrom: CoreRevision.optional(),
      taskId: TaskId.optional(),
      /** How many files the snapshot holds. */
      files: z.number().int().nonnegative(),
      /** What changed against the parent, e.g. `+1 ~1 -0: output/shout/module.ts, pipelines.yaml`. */
      summary: z.string().optional(),
    }),
});

/**
 * An `evolver.run` task took the exclusive write scope `evolve:<coreId>` (committed with its `task.started`, at
 * the core stream's version its host read: two hosts cannot both claim). The claim holds until the task ends
 * (`core.evolve_released`, or its terminal event) or its host is gone; a later claim that finds it so records
 * whom it `supersedes`. Only the holder may record the evolve's revision.
 */
export const CoreEvolveClaimed = defineEvent({
  type: 'core.evolve_claimed',
  schemaVersion: 1,
  description:
    'An evolve task took the exclusive write scope evolve:<core> (with its task.started); it holds it until the task ends or its host is gone.',
  data: () =>
    z.object({
      coreId: z.string().min(1),
      taskId: TaskId,
      /** The host running the task (its identity, as `task.started` records the worker). */
      host: z.string().min(1),
      /** The earlier holder whose claim had expired (its task ended, or its host is gone) without a release. */
      supersedes: z.object({ taskId: TaskId, host: z.string().min(1), why: z.string().min(1) }).optional(),
    }),
});

/** An evolve task gave its `evolve:<core>` scope back (with its revision when it saved one, else when it ended). */
export const CoreEvolveReleased = defineEvent({
  type: 'core.evolve_released',
  schemaVersion: 1,
  description:
    'An evolve task gave back the write scope evolve:<core>: its revision was saved, or it ended without one.',
  data: () =>
    z.object({
      coreId: z.string().min(1),
      taskId: TaskId,
      /** `saved` (with the revision in the same commit), `failed`, `cancelled` or `unchanged`. */
      outcome: z.enum(['saved', 'failed', 'cancelled', 'unchanged']),
    }),
});

/** What a turn runs with, recorded on `turn.started` (its pin): the core revision, its slots and the tools. */
export const TurnCoreCapabilities = z.object({
  coreId: z.string().min(1),
  /** The current revision at admission; absent when the core has no revision yet (an unversioned working copy). */
  revision: CoreRevision.optional(),
  /** The slots the turn's pipelines run, each with the sha-256 of its manifest and module (its version). */
  slots: z.array(z.object({ id: z.string().min(1), phase: z.string().min(1), version: z.string().min(1) })),
  /** The tools the model may see. */
  tools: z.array(z.string().min(1)),
});
export type TurnCoreCapabilities = z.infer<typeof TurnCoreCapabilities>;

export const coreEvents = [CoreRegistered, CoreRevisionSaved, CoreEvolveClaimed, CoreEvolveReleased] as const;
