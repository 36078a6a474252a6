import { createHash } from 'node:crypto';
import type { ScheduleDefinition } from './schedule-file.js';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * The signature of a schedule: a hash of its firing-relevant fields (cron, timezone, prompt,
 * delivery). Editing any of them starts a new signature; `enabled`, `missed` and `catch_up_limit`
 * do not change it. Whitespace between cron fields does not matter.
 *
 * @example
 * scheduleSignature({ cron: '0 9 * * *', timezone: 'UTC', prompt: 'Hi', delivery: null }); // 'a3f1…' (16 hex)
 */
export function scheduleSignature(definition: ScheduleDefinition): string {
  const delivery = definition.delivery
    ? { channel: definition.delivery.channel, conversation_key: definition.delivery.conversation_key ?? null }
    : null;
  const canonical = JSON.stringify([definition.cron, definition.timezone, definition.prompt, delivery]);
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

/**
 * The `sch_` id the schedule events carry for (core, schedule id): derived, so every process agrees
 * on it without a registry. Stable across edits (the signature tells versions apart).
 *
 * @example
 * scheduleEventId('default', 'daily-digest'); // 'sch_…' (26 Crockford base32 characters)
 */
export function scheduleEventId(coreId: string, scheduleId: string): string {
  const digest = createHash('sha256').update(`${coreId}\u0000${scheduleId}`).digest();
  let out = '';
  for (let i = 0; i < 26; i++) out += CROCKFORD[digest[i]! & 31];
  return `sch_${out}`;
}
