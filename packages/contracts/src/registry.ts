import type { z } from 'zod';
import { EVENT_TYPE_PATTERN, type NewEvent } from './envelope.js';
import { EventValidationError, UnknownEventTypeError } from './errors.js';

/**
 * One event type: its dotted name, current schema version, zod schema of its data, and upcasters
 * that turn data recorded under an older schema version into the current shape (never rewriting the log).
 */
export interface EventDefinition<T extends string = string, S extends z.ZodType = z.ZodType> {
  readonly type: T;
  readonly schemaVersion: number;
  readonly data: S;
  readonly description: string;
  /** `upcasters[v]` turns data of schema version `v` into version `v + 1`. */
  readonly upcasters?: Readonly<Record<number, (data: unknown) => unknown>>;
}

/** The data type an event definition describes. */
export type EventData<D> = D extends EventDefinition<string, infer S> ? z.output<S> : never;

/** The new-event shape of a definition, for typed appends. */
export type EventOf<D> = D extends EventDefinition<infer T, infer S> ? NewEvent<T, z.input<S>> : never;

/**
 * What {@link defineEvent} takes: an {@link EventDefinition} whose `data` is the schema or, so that a
 * process builds only the schemas of the event types it meets, a function that builds it on first use.
 */
export interface EventDefinitionInput<T extends string = string, S extends z.ZodType = z.ZodType>
  extends Omit<EventDefinition<T, S>, 'data'> {
  readonly data: S | (() => S);
}

/**
 * Declares an event type. Give `data` as a function (`data: () => z.object(...)`) to build the schema on
 * first use of `definition.data` (validating, reading, the docs), once: a command that meets three event
 * types builds three schemas, not the catalog's hundred (start-up time, docs/performance.md). The
 * definition is the same either way.
 * @example
 * export const SessionArchived = defineEvent({
 *   type: 'session.archived', schemaVersion: 1, description: 'A session was archived.',
 *   data: () => z.object({ sessionId: SessionId, reason: z.string().min(1) }),
 * });
 */
export function defineEvent<const T extends string, S extends z.ZodType>(
  def: EventDefinitionInput<T, S>,
): EventDefinition<T, S> {
  if (!EVENT_TYPE_PATTERN.test(def.type)) {
    throw new Error(`event type "${def.type}" is not a dotted lower-case name like "task.submitted"`);
  }
  if (!Number.isInteger(def.schemaVersion) || def.schemaVersion < 1) {
    throw new Error(`event type "${def.type}" has schemaVersion ${def.schemaVersion}; it must be an integer >= 1`);
  }
  const { data } = def;
  if (typeof data !== 'function') return def as EventDefinition<T, S>;
  let schema: S | undefined;
  const definition = { ...def } as { -readonly [K in keyof EventDefinition<T, S>]: EventDefinition<T, S>[K] };
  Object.defineProperty(definition, 'data', {
    enumerable: true,
    get: () => {
      schema ??= data();
      return schema;
    },
  });
  return definition;
}

/** A lookup of event definitions by type, used by stores to validate on append and on read. */
export interface EventRegistry {
  readonly types: readonly string[];
  has(type: string): boolean;
  get(type: string): EventDefinition;
  /** Validates new data against the current schema; returns the parsed data. */
  validate(type: string, data: unknown): { data: unknown; schemaVersion: number };
  /** Upcasts recorded data to the current schema version and validates it. */
  read(type: string, schemaVersion: number, data: unknown): unknown;
  /** A registry with these definitions added. */
  extend(defs: readonly EventDefinition[]): EventRegistry;
  readonly definitions: readonly EventDefinition[];
}

/** Builds a registry; a type registered twice is refused. */
export function createEventRegistry(defs: readonly EventDefinition[]): EventRegistry {
  const byType = new Map<string, EventDefinition>();
  for (const def of defs) {
    if (byType.has(def.type)) throw new Error(`event type "${def.type}" is registered twice`);
    byType.set(def.type, def);
  }
  const get = (type: string): EventDefinition => {
    const def = byType.get(type);
    if (!def) throw new UnknownEventTypeError(type);
    return def;
  };
  const parse = (def: EventDefinition, data: unknown): unknown => {
    const result = def.data.safeParse(data);
    if (!result.success) {
      const issue = result.error.issues[0];
      throw new EventValidationError(def.type, issue?.path ?? [], issue?.message ?? 'invalid data', {
        cause: result.error,
      });
    }
    return result.data;
  };
  return {
    types: [...byType.keys()],
    definitions: [...byType.values()],
    has: (type) => byType.has(type),
    get,
    validate(type, data) {
      const def = get(type);
      return { data: parse(def, data), schemaVersion: def.schemaVersion };
    },
    read(type, schemaVersion, data) {
      const def = get(type);
      if (schemaVersion > def.schemaVersion) {
        throw new EventValidationError(
          type,
          [],
          `recorded with schema version ${schemaVersion}, newer than this code's ${def.schemaVersion}`,
        );
      }
      let current = data;
      for (let v = schemaVersion; v < def.schemaVersion; v++) {
        const up = def.upcasters?.[v];
        if (!up) throw new EventValidationError(type, [], `no upcaster from schema version ${v} to ${v + 1}`);
        current = up(current);
      }
      return parse(def, current);
    },
    extend(more) {
      return createEventRegistry([...byType.values(), ...more]);
    },
  };
}
