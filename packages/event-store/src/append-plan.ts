import {
  type Clock,
  EventMeta,
  type EventRegistry,
  EventValidationError,
  type IdGenerator,
  IdPrefix,
  isoTime,
  type RecordedEvent,
  systemActor,
} from '@demiurge/contracts';
import { type ExpectedVersion, InvalidAppendError, StreamVersionConflictError } from './errors.js';
import type { AppendOptions, AppendStream } from './event-store.js';

/** An event validated and stamped, waiting for its position and stream version. */
export interface PlannedEvent {
  readonly eventId: string;
  readonly type: string;
  readonly schemaVersion: number;
  readonly data: unknown;
  readonly meta: EventMeta;
}

export interface PlannedStream {
  readonly streamType: string;
  readonly streamId: string;
  readonly expectedVersion: ExpectedVersion;
  readonly events: readonly PlannedEvent[];
}

/** A validated append: what every store checks before it touches storage. */
export interface AppendPlan {
  readonly streams: readonly PlannedStream[];
  readonly idempotencyKey: string | undefined;
  readonly recordedAt: string;
  readonly eventCount: number;
}

/**
 * The meta of an event appended without meta (none on the append, none on the event): the system actor. Built
 * and checked once, shared (frozen) by every such event, instead of a zod parse per event; stores write
 * {@link DEFAULT_META_JSON} for it. Byte for byte what `JSON.stringify(EventMeta.parse({ actor: systemActor }))`
 * gives, which the hash chain covers (a test compares them).
 */
export const DEFAULT_META: EventMeta = Object.freeze({
  actor: Object.freeze({ kind: systemActor.kind, id: systemActor.id }),
});
/** `JSON.stringify(DEFAULT_META)`: the stored meta text of an event appended without meta. */
export const DEFAULT_META_JSON: string = JSON.stringify(DEFAULT_META);

/** The stored text of the shared metas (the default, and each remembered actor's): encoded once. */
const sharedMetaJson = new WeakMap<EventMeta, string>([[DEFAULT_META, DEFAULT_META_JSON]]);

/** The stored meta text of a planned event (encoded once for a shared meta). */
export function metaJson(meta: EventMeta): string {
  return sharedMetaJson.get(meta) ?? JSON.stringify(meta);
}

/** Remembered actor-only metas, by `kind\u0000id`; emptied when it reaches this many (ids of hosts, owners). */
const MAX_ACTOR_METAS = 256;
const actorMetas = new Map<string, EventMeta>();

/**
 * The checked meta of an append whose meta is its actor alone (`{ actor: { kind, id } }`, every durable-work and
 * host command): parsed by zod once per actor, then shared (frozen, like {@link DEFAULT_META}) with its stored
 * text. Anything else (more fields, other keys in the actor, non-string values) is parsed every time.
 */
function actorOnlyMeta(event: AppendStream['events'][number], options: AppendOptions | undefined): EventMeta {
  const given = options?.meta as Record<string, unknown> | undefined;
  const actor = given?.actor as Record<string, unknown> | undefined;
  if (event.meta !== undefined || !isActorOnly(given, actor)) return checkedMeta(event, options);
  const key = `${actor.kind}\u0000${actor.id}`;
  let meta = actorMetas.get(key);
  if (meta === undefined) {
    const parsed = checkedMeta(event, options);
    meta = Object.freeze({ ...parsed, actor: Object.freeze({ ...parsed.actor }) });
    if (actorMetas.size >= MAX_ACTOR_METAS) actorMetas.clear();
    actorMetas.set(key, meta);
    sharedMetaJson.set(meta, JSON.stringify(meta));
  }
  return meta;
}

function isActorOnly(
  meta: Record<string, unknown> | undefined,
  actor: Record<string, unknown> | undefined,
): actor is { kind: string; id: string } {
  if (meta === undefined || actor === null || typeof actor !== 'object') return false;
  if (Object.getPrototypeOf(meta) !== Object.prototype || Object.getPrototypeOf(actor) !== Object.prototype) {
    return false;
  }
  const metaKeys = Object.keys(meta);
  const actorKeys = Object.keys(actor);
  return (
    metaKeys.length === 1 &&
    actorKeys.length === 2 &&
    typeof actor.kind === 'string' &&
    typeof actor.id === 'string' &&
    (actorKeys[0] === 'kind' ? actorKeys[1] === 'id' : actorKeys[0] === 'id' && actorKeys[1] === 'kind')
  );
}

const STREAM_TYPE = /^[a-z][a-z0-9_-]*$/;
const MAX_ID_LENGTH = 256;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Validates an append request and every event's data and meta against the registry.
 * Throws {@link InvalidAppendError} or `EventValidationError` / `UnknownEventTypeError`; stores call it
 * before opening a transaction, so bad input never reaches the log.
 */
export function planAppend(
  input: AppendStream | readonly AppendStream[],
  options: AppendOptions | undefined,
  deps: { registry: EventRegistry; ids: IdGenerator; clock: Clock },
): AppendPlan {
  const streams: readonly AppendStream[] = isStreamList(input) ? input : [input];
  if (streams.length === 0) throw new InvalidAppendError('an append needs at least one stream');
  const key = options?.idempotencyKey;
  if (key !== undefined && (key.length === 0 || key.length > MAX_ID_LENGTH || CONTROL.test(key))) {
    throw new InvalidAppendError(`idempotency key must be 1-${MAX_ID_LENGTH} printable characters`);
  }
  const seen = new Set<string>();
  let eventCount = 0;
  const planned = streams.map((stream): PlannedStream => {
    checkStreamHeader(stream);
    if (seen.has(stream.streamId)) {
      throw new InvalidAppendError(`stream ${stream.streamId} appears twice in one append; merge its events`);
    }
    seen.add(stream.streamId);
    eventCount += stream.events.length;
    return {
      streamType: stream.streamType,
      streamId: stream.streamId,
      expectedVersion: stream.expectedVersion,
      events: stream.events.map((event) => {
        if (event === null || typeof event !== 'object' || typeof event.type !== 'string') {
          throw new InvalidAppendError(`stream ${stream.streamId} has an event without a type`);
        }
        const { data, schemaVersion } = deps.registry.validate(event.type, event.data);
        const meta =
          event.meta === undefined && options?.meta === undefined ? DEFAULT_META : actorOnlyMeta(event, options);
        const eventId = event.eventId ?? deps.ids.next(IdPrefix.event);
        if (typeof eventId !== 'string' || eventId.length === 0 || eventId.length > MAX_ID_LENGTH) {
          throw new InvalidAppendError(`event id must be a non-empty string of at most ${MAX_ID_LENGTH} characters`);
        }
        return { eventId, type: event.type, schemaVersion, data, meta };
      }),
    };
  });
  return {
    streams: planned,
    idempotencyKey: key,
    recordedAt: isoTime(deps.clock.now()),
    eventCount,
  };
}

function checkedMeta(event: AppendStream['events'][number], options: AppendOptions | undefined): EventMeta {
  const meta = EventMeta.safeParse({ actor: systemActor, ...options?.meta, ...event.meta });
  if (!meta.success) {
    const issue = meta.error.issues[0];
    throw new EventValidationError(event.type, ['meta', ...(issue?.path ?? [])], issue?.message ?? 'invalid');
  }
  return meta.data;
}

function isStreamList(input: AppendStream | readonly AppendStream[]): input is readonly AppendStream[] {
  return Array.isArray(input);
}

function checkStreamHeader(stream: AppendStream): void {
  if (typeof stream.streamId !== 'string' || stream.streamId.length === 0 || stream.streamId.length > MAX_ID_LENGTH) {
    throw new InvalidAppendError(`stream id must be a non-empty string of at most ${MAX_ID_LENGTH} characters`);
  }
  if (typeof stream.streamType !== 'string' || !STREAM_TYPE.test(stream.streamType)) {
    throw new InvalidAppendError(
      `stream ${stream.streamId} has stream type ${JSON.stringify(stream.streamType)}; use a lower-case name like "task"`,
    );
  }
  const v = stream.expectedVersion;
  if (v !== 'any' && v !== 'no_stream' && !(Number.isInteger(v) && v >= 0)) {
    throw new InvalidAppendError(
      `stream ${stream.streamId} has expected version ${JSON.stringify(v)}; use a version >= 0, "no_stream" or "any"`,
    );
  }
  if (!Array.isArray(stream.events) || stream.events.length === 0) {
    throw new InvalidAppendError(`stream ${stream.streamId} has no events to append`);
  }
}

/** Throws {@link StreamVersionConflictError} unless a stream at `actual` satisfies `expected`. */
export function checkExpectedVersion(streamId: string, expected: ExpectedVersion, actual: number): void {
  if (expected === 'any') return;
  const want = expected === 'no_stream' ? 0 : expected;
  if (want !== actual) throw new StreamVersionConflictError(streamId, expected, actual);
}

/** Builds the recorded event for a planned one at its position and version. */
export function toRecorded(
  plan: AppendPlan,
  stream: PlannedStream,
  event: PlannedEvent,
  position: number,
  streamVersion: number,
): RecordedEvent {
  return {
    position,
    eventId: event.eventId,
    streamType: stream.streamType,
    streamId: stream.streamId,
    streamVersion,
    type: event.type,
    schemaVersion: event.schemaVersion,
    data: event.data,
    meta: event.meta,
    recordedAt: plan.recordedAt,
  };
}

/**
 * The stored idempotency key of the i-th event of an append: the key itself on the first event,
 * `key<US>i` on the rest (control characters are refused in keys, so these cannot collide).
 */
export function eventIdempotencyKey(key: string, index: number): string {
  return index === 0 ? key : `${key}\u001f${index}`;
}
