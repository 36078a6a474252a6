import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Harness, openHarness, slotRuns, tempCore } from './harness.js';

// The worked example of docs/slots.md, verbatim: keep the two in step.
const REDACT_YAML = `description: Masks API-key-like strings in the response before it is sent.
timeout_seconds: 5
failure_policy: hard   # better no answer than a leaked key
`;
const REDACT_MODULE = `import type { SlotContext } from '@demiurge/slots';

const SECRET = /\\b(sk|pk|ghp|xox[abp])[-_][A-Za-z0-9_-]{16,}\\b/g;

/** Replaces API-key-like strings in the response with a marker, and logs how many it found. */
export default async function redactSecrets(ctx: SlotContext): Promise<void> {
  const text = ctx.output.response_text;
  const found = text.match(SECRET)?.length ?? 0;
  if (found === 0) return;
  ctx.output.set_response_text(text.replace(SECRET, '[redacted]'));
  ctx.log(\`redacted \${found} secret(s) in turn \${ctx.turn_id}\`);
}
`;
const BASE_OUTPUT = `import type { SlotContext } from '@demiurge/slots';

export default async function baseOutput(ctx: SlotContext): Promise<void> {
  await ctx.output.send_text(ctx.output.response_text);
}
`;

let h: Harness;
beforeEach(async () => {
  h = await openHarness();
});
afterEach(async () => {
  await h.close();
});

describe('the authoring guide example', () => {
  const slots = {
    redact_secrets: { phase: 'output' as const, yaml: REDACT_YAML, module: REDACT_MODULE },
    base_output: { phase: 'output' as const, module: BASE_OUTPUT },
  };

  it('redacts the response before base_output sends it', async () => {
    const runtime = await h.runtime(tempCore({ output: ['redact_secrets', 'base_output'] }, slots));
    const sessionId = await h.session();
    const turnId = h.ids.next('trn');
    const out = await runtime.runOutput({
      sessionId,
      turnId,
      responseText: 'Use sk-abcdefghijklmnopqrstuvwx to call it.',
    });
    expect(out.responseText).toBe('Use [redacted] to call it.');
    expect((await h.sessions.history(sessionId)).map((m) => m.text)).toEqual(['Use [redacted] to call it.']);
    expect(h.logs.map((l) => l.text)).toEqual([`redacted 1 secret(s) in turn ${turnId}`]);
  });

  it('fails as a parallel slot: it cannot change the response', async () => {
    const runtime = await h.runtime(tempCore({ output: ['base_output'], outputParallel: ['redact_secrets'] }, slots));
    await runtime.runOutput({
      sessionId: await h.session(),
      turnId: h.ids.next('trn'),
      responseText: 'sk-abcdefghijklmnopqrstuvwx',
    });
    await h.background.drain(5000);
    const redact = (await slotRuns(h)).find((r) => r.slotId === 'redact_secrets');
    expect(redact).toMatchObject({ status: 'failed', policy: 'soft', error: { code: 'policy_denied' } });
  });
});
