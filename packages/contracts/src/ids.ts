import { z } from 'zod';
import type { Clock } from './clock.js';

/** Crockford base32, the alphabet of ULIDs: sortable as plain strings. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

/** The id prefixes of the runtime's entities. */
export const IdPrefix = {
  event: 'evt',
  session: 'ses',
  run: 'run',
  turn: 'trn',
  message: 'msg',
  task: 'tsk',
  work: 'wrk',
  delivery: 'dlv',
  toolCall: 'tcl',
  artifact: 'art',
  schedule: 'sch',
  scheduleInstance: 'sci',
  approval: 'apr',
  slotRun: 'slr',
  mcpServer: 'mcs',
} as const;
export type IdPrefix = (typeof IdPrefix)[keyof typeof IdPrefix];

/** A branded id string for a prefix, e.g. `Id<'ses'>` is `ses_01J...`. */
export type Id<P extends string> = string & z.$brand<`${P}_id`>;

/**
 * A zod schema for a prefixed, time-sortable id, e.g. `prefixedId('ses')` accepts `ses_01JD5...`.
 * @example
 * const SessionId = prefixedId('ses');
 * SessionId.parse('ses_01JD5Y7Q6N0000000000000000');
 */
export function prefixedId<P extends string>(prefix: P) {
  return z
    .string()
    .regex(new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{${TIME_CHARS + RANDOM_CHARS}}$`), `expected a ${prefix}_ id`)
    .brand<`${P}_id`>();
}

export const EventId = prefixedId(IdPrefix.event);
export type EventId = z.infer<typeof EventId>;
export const SessionId = prefixedId(IdPrefix.session);
export type SessionId = z.infer<typeof SessionId>;
export const RunId = prefixedId(IdPrefix.run);
export type RunId = z.infer<typeof RunId>;
export const TurnId = prefixedId(IdPrefix.turn);
export type TurnId = z.infer<typeof TurnId>;
export const MessageId = prefixedId(IdPrefix.message);
export type MessageId = z.infer<typeof MessageId>;
export const TaskId = prefixedId(IdPrefix.task);
export type TaskId = z.infer<typeof TaskId>;
export const WorkId = prefixedId(IdPrefix.work);
export type WorkId = z.infer<typeof WorkId>;
export const DeliveryId = prefixedId(IdPrefix.delivery);
export type DeliveryId = z.infer<typeof DeliveryId>;

/** The port every id comes from, so tests and simulations are deterministic. */
export interface IdGenerator {
  /** A new id with the prefix; ids from one generator sort in the order they were made. */
  next<P extends string>(prefix: P): Id<P>;
}

/**
 * ULID-style ids: 48 bits of milliseconds then 80 random bits, monotonic within a millisecond.
 * `random` fills a byte array (defaults to `crypto.getRandomValues`, drawn from a pool filled 4 KiB at a time).
 */
export function createIdGenerator(clock: Clock, random: (bytes: Uint8Array) => void = pooledRandom): IdGenerator {
  let lastTime = -1;
  let lastTimeText = '';
  const last = new Uint8Array(RANDOM_CHARS); // one 5-bit digit per entry
  const bytes = new Uint8Array(RANDOM_CHARS);
  return {
    next<P extends string>(prefix: P): Id<P> {
      const now = Math.max(clock.now(), lastTime);
      if (now === lastTime) {
        increment(last);
      } else {
        bytes.fill(0);
        random(bytes);
        for (let i = 0; i < RANDOM_CHARS; i++) last[i] = (bytes[i] ?? 0) & 31;
        lastTime = now;
        lastTimeText = encodeTime(now);
      }
      return `${prefix}_${lastTimeText}${encodeDigits(last)}` as Id<P>;
    },
  };
}

const POOL_BYTES = 4096;
let pool = new Uint8Array(0);
let poolAt = 0;

/** `crypto.getRandomValues`, one call per 4 KiB instead of one per id (each call costs about a microsecond). */
function pooledRandom(out: Uint8Array): void {
  if (poolAt + out.length > pool.length) {
    pool = new Uint8Array(POOL_BYTES);
    globalThis.crypto.getRandomValues(pool);
    poolAt = 0;
  }
  out.set(pool.subarray(poolAt, poolAt + out.length));
  poolAt += out.length;
}

function encodeTime(ms: number): string {
  let out = '';
  let t = ms;
  for (let i = 0; i < TIME_CHARS; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function encodeDigits(digits: Uint8Array): string {
  let out = '';
  for (const d of digits) out += ALPHABET[d];
  return out;
}

function increment(digits: Uint8Array): void {
  for (let i = digits.length - 1; i >= 0; i--) {
    const d = digits[i] ?? 0;
    if (d < 31) {
      digits[i] = d + 1;
      return;
    }
    digits[i] = 0;
  }
  throw new Error('id space for this millisecond is exhausted');
}

/** The millisecond timestamp encoded in an id made by {@link createIdGenerator}. */
export function idTime(id: string): number {
  const body = id.slice(id.indexOf('_') + 1, id.indexOf('_') + 1 + TIME_CHARS);
  let t = 0;
  for (const ch of body) {
    const v = ALPHABET.indexOf(ch);
    if (v < 0) throw new Error(`not a time-sortable id: ${id}`);
    t = t * 32 + v;
  }
  return t;
}
