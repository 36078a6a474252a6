import { z } from 'zod';
import { SessionId } from '../ids.js';
import { defineEvent } from '../registry.js';

/** A session's execution policy: `plan` blocks mutating actions unless approved; `default` does not. */
export const SessionMode = z.enum(['plan', 'default']);
export type SessionMode = z.infer<typeof SessionMode>;

export const SessionModeChanged = defineEvent({
  type: 'session.mode_changed',
  schemaVersion: 1,
  description: "A session's policy overlay changed between plan mode and default mode.",
  data: z.object({ sessionId: SessionId, mode: SessionMode, previous: SessionMode }),
});

export const sessionModeEvents = [SessionModeChanged] as const;
