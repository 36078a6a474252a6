import type { SlotContext } from '@demiurge/slots';

/** The core's instructions, as system context for the model. The user's text is left as it arrived. */
export default async function baseInput(ctx: SlotContext): Promise<void> {
  if (ctx.core.instructions.trim() !== '') {
    ctx.input.add_context(ctx.core.instructions, { role: 'system', write_history: false });
  }
}
