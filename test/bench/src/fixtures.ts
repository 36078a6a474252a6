import { createEventRegistry, defineEvent, type EventRegistry, type RecordedEvent } from '@demiurge/contracts';
import { defineProjector, type Projector } from '@demiurge/event-store';
import { z } from 'zod';

/** The one event type of every benchmark: about 300 bytes of data JSON. */
export const BenchRecorded = defineEvent({
  type: 'bench.recorded',
  schemaVersion: 1,
  description: 'A benchmark event carrying an opaque payload.',
  data: z.object({ seq: z.number().int().nonnegative(), payload: z.string() }),
});

export const BENCH_TYPE = BenchRecorded.type;
export const STREAM_TYPE = 'bench';
export const benchRegistry: EventRegistry = createEventRegistry([BenchRecorded]);

/** The meta the store records for an append without meta (the system actor), as the raw loops store it. */
export const META_JSON = JSON.stringify({ actor: { kind: 'system', id: 'demiurge' } });

export interface BenchData {
  readonly seq: number;
  readonly payload: string;
}

const PAYLOAD_CHARS = 270;
const PAYLOADS = Array.from({ length: 64 }, (_, i) => pseudoRandomText(i + 1, PAYLOAD_CHARS));

/** The data of the `seq`-th event: `{"seq":…,"payload":"…"}`, about 300 bytes as JSON. */
export function benchData(seq: number): BenchData {
  return { seq, payload: PAYLOADS[seq % PAYLOADS.length]! };
}

export function streamId(index: number): string {
  return `bench-${index}`;
}

/** A raw event id of the store's shape (`evt_` + 26 characters). */
export function rawEventId(n: number, prefix = ''): string {
  return `evt_${prefix}${String(n).padStart(26 - prefix.length, '0')}`;
}

function pseudoRandomText(seed: number, length: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789 ';
  let x = seed * 2654435761;
  let out = '';
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += alphabet[x % alphabet.length];
  }
  return out;
}

// --- documents, shared by the store's projectors and the raw loops ------------------------------

/** The append benchmark's projector document: the last event of a stream (a put, no get). */
export function lastOfStream(position: number, version: number): { position: number; version: number } {
  return { position, version };
}

export function incremented(previous: number | undefined): number {
  return (previous ?? 0) + 1;
}

export interface LastEventDoc {
  readonly position: number;
  readonly version: number;
  readonly seq: number;
  readonly previous: number;
}

export function lastEvent(
  position: number,
  version: number,
  seq: number,
  prev: LastEventDoc | undefined,
): LastEventDoc {
  return { position, version, seq, previous: prev?.position ?? 0 };
}

/** The projector names of the rebuild benchmark, which the raw loop writes under too. */
export const REBUILD_PROJECTOR = {
  streamCounter: 'stream-counter',
  typeCounter: 'type-counter',
  lastEvent: 'last-event',
} as const;

// --- projectors ----------------------------------------------------------------------------------

/** The one inline projector of the append benchmarks: upserts the stream's last event. */
export const appendProjector: Projector = defineProjector({
  name: 'stream-last',
  version: 1,
  handles: [BENCH_TYPE],
  apply: (event, tx) => tx.put('last', event.streamId, lastOfStream(event.position, event.streamVersion)),
});

const streamCounter = defineProjector({
  name: REBUILD_PROJECTOR.streamCounter,
  version: 1,
  handles: [BENCH_TYPE],
  apply: (event, tx) => tx.put('streams', event.streamId, incremented(tx.get<number>('streams', event.streamId))),
});

const typeCounter = defineProjector({
  name: REBUILD_PROJECTOR.typeCounter,
  version: 1,
  handles: [BENCH_TYPE],
  apply: (event, tx) => tx.put('types', event.type, incremented(tx.get<number>('types', event.type))),
});

const lastEventProjector = defineProjector({
  name: REBUILD_PROJECTOR.lastEvent,
  version: 1,
  handles: [BENCH_TYPE],
  apply: (event: RecordedEvent, tx) => {
    const seq = (event.data as BenchData).seq;
    const prev = tx.get<LastEventDoc>('last', event.streamId);
    tx.put('last', event.streamId, lastEvent(event.position, event.streamVersion, seq, prev));
  },
});

/** The three projectors of the rebuild benchmark, each a get + put per event. */
export const rebuildProjectors: readonly Projector[] = [streamCounter, typeCounter, lastEventProjector];
