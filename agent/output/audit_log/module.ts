import type { SlotContext } from '@demiurge/slots';

/** Runs in the background after the response is sent: one log line per turn, nothing else. */
export default async function auditLog(ctx: SlotContext): Promise<void> {
  const words = ctx.output.response_text.split(/\s+/).filter(Boolean).length;
  ctx.log(`turn ${ctx.turn_id ?? '-'}: response of ${words} words for input of ${ctx.input.raw_text.length} chars`);
}
