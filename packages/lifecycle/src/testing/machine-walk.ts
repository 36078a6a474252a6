import type { IdGenerator, NewEvent } from '@demiurge/contracts';
import fc from 'fast-check';
import type { Lifecycle } from '../define-lifecycle.js';
import { transitionTable } from '../transition-table.js';
import { allowedEvents, nextState } from '../transitions.js';

/**
 * Random walks through a lifecycle machine with valid event data, for property tests. At each step the
 * walk takes an event the machine accepts in the aggregate's current state (`allowedEvents`), with data
 * built by the aggregate's {@link WalkSpec} (guarded variants included), so every generated log verifies
 * clean. A few aggregates are walked at once (slots); an aggregate whose state is final makes way for a
 * new one, so no step is wasted.
 */

/** How a step picks among the accepted events. */
export type Mode = 'any' | 'live' | 'rare' | 'explore' | 'prefer';

/** The random choices of one step. */
export interface Step {
  /** Which slot (aggregate) moves. */
  readonly slot: number;
  /** Which candidate event, modulo their number. */
  readonly pick: number;
  /** Which variant of the event's data (optional fields, guarded targets). */
  readonly variant: number;
  /**
   * `any`: all accepted events; `live`: those leading to a state with a way out (walks reach deep
   * states); `rare`: those this walk took least; `explore`: those into the state with the most edges
   * this walk has not taken yet (every edge gets taken, deep ones too); `prefer`: the spec's preferred
   * event when accepted (long runs of task.log...).
   */
  readonly mode: Mode;
  /** Milliseconds the clock moves before the step. */
  readonly delay: number;
}

export const step = (slots: number): fc.Arbitrary<Step> =>
  fc.record({
    slot: fc.nat(slots - 1),
    pick: fc.nat(),
    variant: fc.nat(),
    mode: fc.constantFrom<Mode>('any', 'live', 'rare', 'explore', 'prefer'),
    delay: fc.integer({ min: 0, max: 20_000 }),
  });

export const steps = (slots: number, maxLength = 150) =>
  fc.array(step(slots), { minLength: 10, maxLength, size: 'max' });

/** How to build valid data for one aggregate's events. */
export interface WalkSpec<S extends string, E extends string, M extends { state: S }> {
  readonly lifecycle: Lifecycle<S, E>;
  readonly streamType: string;
  create(ids: IdGenerator): M;
  streamId(model: M): string;
  data(model: M, type: E, variant: number, now: number): Record<string, unknown>;
  /** Updates the model's own fields once the event is taken (the walk moves `state`). */
  taken?(model: M, type: E, data: Record<string, unknown>): void;
  readonly prefer?: E;
}

/** One event of a walk, ready to append. */
export interface WalkEvent<M> {
  readonly model: M;
  readonly streamType: string;
  readonly streamId: string;
  readonly event: NewEvent;
  /** `from event to`, as in {@link edgeKey}. */
  readonly edge: string;
}

/** Data variants tried per event type: enough to reach every target of a guarded event. */
const VARIANTS = 6;

export const edgeKey = (from: string, event: string, to: string) => `${from} ${event} ${to}`;

export class MachineWalk<S extends string, E extends string, M extends { state: S }> {
  /** Every aggregate walked, in creation order. */
  readonly models: M[] = [];
  /** How often this walk took each edge. */
  readonly edges = new Map<string, number>();
  /** The machine's edges out of each state (from its transition table). */
  private readonly out = new Map<string, string[]>();
  private readonly slots: M[];

  constructor(
    private readonly spec: WalkSpec<S, E, M>,
    private readonly ids: IdGenerator,
    slots: number,
  ) {
    for (const row of transitionTable(spec.lifecycle)) {
      this.out.set(row.from, [...(this.out.get(row.from) ?? []), edgeKey(row.from, row.event, row.to)]);
    }
    this.slots = Array.from({ length: slots }, () => this.create());
  }

  /** The next event of the slot's aggregate (a new aggregate's creation when the old one is final). */
  next(s: Step, now: number): WalkEvent<M> {
    const index = s.slot % this.slots.length;
    let model = this.slots[index]!;
    let event = this.take(model, s, now);
    if (!event) {
      model = this.slots[index] = this.create();
      event = this.take(model, s, now);
    }
    if (!event) throw new Error(`a new ${this.spec.lifecycle.aggregate} accepts no event`);
    return event;
  }

  private create(): M {
    const model = this.spec.create(this.ids);
    this.models.push(model);
    return model;
  }

  private take(model: M, s: Step, now: number): WalkEvent<M> | undefined {
    const { lifecycle } = this.spec;
    const from = model.state;
    // One candidate per edge: a guarded event (work.failed, *.resolved) has one per target its variants reach.
    const byEdge = new Map<string, { type: E; data: Record<string, unknown>; to: S; edge: string }>();
    for (const type of allowedEvents(lifecycle, from)) {
      for (let k = 0; k < VARIANTS; k++) {
        const data = this.spec.data(model, type, s.variant + k, now);
        const to = nextState(lifecycle, from, { type, data });
        if (to === undefined) throw new Error(`the walk built ${type}, which ${lifecycle.aggregate} ${from} refuses`);
        const edge = edgeKey(from, type, to);
        if (!byEdge.has(edge)) byEdge.set(edge, { type, data, to, edge });
      }
    }
    const candidates = [...byEdge.values()];
    if (candidates.length === 0) return undefined;
    const count = (edge: string) => this.edges.get(edge) ?? 0;
    const untaken = (state: string) => (this.out.get(state) ?? []).filter((e) => count(e) === 0).length;
    const fewest = Math.min(...candidates.map((c) => count(c.edge)));
    const most = Math.max(...candidates.map((c) => untaken(c.to)));
    const pools: Record<Mode, typeof candidates> = {
      any: candidates,
      live: candidates.filter((c) => allowedEvents(lifecycle, c.to).length > 0),
      rare: candidates.filter((c) => count(c.edge) === fewest),
      explore: most > 0 ? candidates.filter((c) => untaken(c.to) === most) : [],
      prefer: candidates.filter((c) => c.type === this.spec.prefer),
    };
    const pool = pools[s.mode].length > 0 ? pools[s.mode] : candidates;
    const { type, data, to, edge } = pool[s.pick % pool.length]!;
    this.edges.set(edge, count(edge) + 1);
    model.state = to;
    this.spec.taken?.(model, type, data);
    return {
      model,
      streamType: this.spec.streamType,
      streamId: this.spec.streamId(model),
      event: { type, data },
      edge,
    };
  }
}

/** One stream's part of an append (the shape `EventStore.append` takes). */
export interface WalkAppendStream {
  readonly streamType: string;
  readonly streamId: string;
  readonly expectedVersion: 'any';
  readonly events: NewEvent[];
}

/** Walk events as the streams of one atomic append: runs of one stream's events, in walk order. */
export function appendStreams(events: readonly WalkEvent<unknown>[]): WalkAppendStream[] {
  const streams: WalkAppendStream[] = [];
  for (const { streamType, streamId, event } of events) {
    const last = streams[streams.length - 1];
    if (last?.streamId === streamId) last.events.push(event);
    else streams.push({ streamType, streamId, expectedVersion: 'any', events: [event] });
  }
  return streams;
}
