import { z } from 'zod';
import { SessionId, TurnId } from '../ids.js';
import { defineEvent } from '../registry.js';

/**
 * `turn.cancelled`, the turn event the lifecycle adds. `turn.started`, `turn.completed` and
 * `turn.failed` are declared with the session events, where today's runtime records them.
 */
export const TurnCancelled = defineEvent({
  type: 'turn.cancelled',
  schemaVersion: 1,
  description: 'A turn was cancelled; in-flight tool calls are settled and the reason is kept.',
  data: z.object({ turnId: TurnId, sessionId: SessionId, reason: z.string().min(1) }),
});

export const turnEvents = [TurnCancelled] as const;
