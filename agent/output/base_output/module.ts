import type { SlotContext } from '@demiurge/slots';

/** Sends the response text (as the serial output slots before it left it). */
export default async function baseOutput(ctx: SlotContext): Promise<void> {
  await ctx.output.send_text(ctx.output.response_text);
}
