import type { Clock } from '../clock.js';
import { createIdGenerator, type IdGenerator } from '../ids.js';

/** Ids that are the same on every run for the same seed and clock (mulberry32 random bits). */
export function createSeededIdGenerator(clock: Clock, seed = 1): IdGenerator {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) & 0xff;
  };
  return createIdGenerator(clock, (bytes) => {
    for (let i = 0; i < bytes.length; i++) bytes[i] = next();
  });
}
