import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SlotRuntime } from '../src/index.js';
import { type Harness, openHarness, slotEvents, slotRuns, tempCore, writeFiles } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await openHarness();
});
afterEach(async () => {
  await h.close();
});

describe('serial and parallel slots', () => {
  const adds = (text: string) =>
    `export default async (ctx) => { ctx.input.add_context((ctx.input.context.at(-1)?.text ?? '') + '${text}'); };\n`;

  it('runs serial slots in order, each seeing the context before it', async () => {
    const dir = tempCore(
      { input: ['a', 'b', 'c'] },
      {
        a: { phase: 'input', module: adds('a') },
        b: { phase: 'input', module: adds('b') },
        c: { phase: 'input', module: adds('c') },
      },
    );
    const slots = await h.runtime(dir);
    const sessionId = await h.session();
    const { context } = await slots.runInput({ sessionId, turnId: h.ids.next('trn'), rawText: 'hi', history: [] });
    expect(context.map((c) => [c.role, c.text])).toEqual([
      ['user', 'a'],
      ['user', 'ab'],
      ['user', 'abc'],
    ]);
    const events = await slotEvents(h);
    expect(events.map((e) => e.type)).toEqual([
      'slot.started',
      'slot.finished',
      'slot.started',
      'slot.finished',
      'slot.started',
      'slot.finished',
    ]);
    expect(events.filter((e) => e.type === 'slot.started').map((e) => (e.data as { slotId: string }).slotId)).toEqual([
      'a',
      'b',
      'c',
    ]);
  });

  it('loads TypeScript (compiled by esbuild), plain .mjs modules, and a named run export', async () => {
    const dir = tempCore(
      { input: ['typed', 'plain', 'named'] },
      {
        typed: {
          phase: 'input',
          module: [
            "import type { SlotContext } from '@demiurge/slots';",
            'interface Note { readonly text: string }',
            "const note: Note = { text: 'typed' };",
            'export default async function typed(ctx: SlotContext): Promise<void> {',
            "  ctx.input.add_context(note.text satisfies string, { role: 'system' });",
            '}',
            '',
          ].join('\n'),
        },
        plain: {
          phase: 'input',
          file: 'main.mjs',
          module: "export default (ctx) => ctx.input.add_context('plain');\n",
        },
        named: {
          phase: 'input',
          module:
            "export async function run(ctx: { input: { add_context(t: string): void } }) { ctx.input.add_context('named'); }\n",
        },
      },
    );
    const slots = await h.runtime(dir);
    const { context } = await slots.runInput({
      sessionId: await h.session(),
      turnId: h.ids.next('trn'),
      rawText: '',
      history: [],
    });
    expect(context.map((c) => `${c.role}:${c.text}`)).toEqual(['system:typed', 'user:plain', 'user:named']);
  });

  it('imports a module once per runtime; a runtime on the reloaded core sees the edited module', async () => {
    const dir = tempCore(
      { input: ['edit'] },
      { edit: { phase: 'input', module: "export default (ctx) => ctx.input.add_context('v1');\n" } },
    );
    const first = await h.runtime(dir);
    const sessionId = await h.session();
    const run = async (slots: SlotRuntime) =>
      (await slots.runInput({ sessionId, turnId: h.ids.next('trn'), rawText: '', history: [] })).context[0]!.text;
    expect(await run(first)).toBe('v1');
    writeFiles(dir, { 'input/edit/module.ts': "export default (ctx) => ctx.input.add_context('v2');\n" });
    expect(await run(first)).toBe('v1');
    expect(await run(await h.runtime(dir))).toBe('v2');
  });

  it('fails (soft) a module that exports no slot function', async () => {
    const dir = tempCore({ input: ['empty'] }, { empty: { phase: 'input', module: 'export const x = 1;\n' } });
    const slots = await h.runtime(dir);
    const out = await slots.runInput({
      sessionId: await h.session(),
      turnId: h.ids.next('trn'),
      rawText: '',
      history: [],
    });
    expect(out.runs[0]!.status).toBe('failed');
    expect((await slotRuns(h))[0]!.error).toMatchObject({
      code: 'invalid_spec',
      message: expect.stringMatching(/exports no slot function/),
    });
  });

  it('gives input slots the history and the raw text, which they cannot assign', async () => {
    const dir = tempCore(
      { input: ['reader'] },
      {
        reader: {
          phase: 'input',
          module: [
            'export default (ctx) => {',
            "  ctx.input.add_context(ctx.input.history.map((m) => m.role + '=' + m.text).join(',') + '|' + ctx.input.raw_text);",
            "  try { ctx.input.raw_text = 'changed'; } catch (e) { ctx.log(e.name + ': ' + e.message); }",
            '};',
            '',
          ].join('\n'),
        },
      },
    );
    const slots = await h.runtime(dir);
    const sessionId = await h.session();
    await h.sessions.recordMessage({ sessionId, role: 'user', text: 'earlier' });
    await h.sessions.recordMessage({ sessionId, role: 'system', text: 'hidden', visibility: 'model_hidden' });
    const out = await slots.runInput({ sessionId, turnId: h.ids.next('trn'), rawText: 'now' });
    // The assignment threw (and was caught), but breaking a rule fails the run all the same.
    expect(out.runs[0]!.status).toBe('failed');
    expect(out.context).toEqual([]);
    expect(h.logs[0]!.text).toMatch(
      /^SlotRuleError: slot reader: ctx\.input\.raw_text = is not allowed: raw_text is read-only/,
    );
    const view = (await slotRuns(h))[0]!;
    expect(view).toMatchObject({ status: 'failed', policy: 'soft', error: { code: 'policy_denied' } });

    const ok = tempCore(
      { input: ['reader'] },
      {
        reader: {
          phase: 'input',
          module:
            "export default (ctx) => ctx.input.add_context(ctx.input.history.map((m) => m.text).join(',') + '|' + ctx.input.raw_text);\n",
        },
      },
    );
    const fine = await (await h.runtime(ok)).runInput({ sessionId, turnId: h.ids.next('trn'), rawText: 'now' });
    expect(fine.context[0]!.text).toBe('earlier|now');
  });

  it('refuses a parallel slot that changes the prompt, the response or the history, recording slot.failed (soft)', async () => {
    const dir = tempCore(
      {
        input: ['base'],
        inputParallel: ['sneaky_prompt'],
        output: ['base_out'],
        outputParallel: ['sneaky_response', 'sneaky_history', 'notifier'],
      },
      {
        base: { phase: 'input', module: "export default (ctx) => ctx.input.add_context('kept');\n" },
        sneaky_prompt: { phase: 'input', module: "export default (ctx) => { ctx.input.add_context('injected'); };\n" },
        base_out: {
          phase: 'output',
          module: "export default (ctx) => ctx.output.set_response_text(ctx.output.response_text + '!');\n",
        },
        sneaky_response: {
          phase: 'output',
          // Catching the refusal does not help: the run fails anyway.
          module: "export default (ctx) => { try { ctx.output.set_response_text('hijacked'); } catch {} };\n",
        },
        sneaky_history: {
          phase: 'output',
          yaml: 'history_policy: persist\n',
          module: "export default async (ctx) => { await ctx.output.send_text('into history'); };\n",
        },
        notifier: {
          phase: 'output',
          yaml: 'history_policy: transient\n',
          module:
            "export default async (ctx) => { await ctx.output.send_text('fyi: ' + ctx.output.response_text); };\n",
        },
      },
    );
    const slots = await h.runtime(dir);
    const sessionId = await h.session();
    const turnId = h.ids.next('trn');
    const input = await slots.runInput({ sessionId, turnId, rawText: 'q', history: [] });
    expect(input.context.map((c) => c.text)).toEqual(['kept']);
    const output = await slots.runOutput({ sessionId, turnId, responseText: 'answer' });
    expect(output.responseText).toBe('answer!');
    expect((await h.background.drain(5000)).drained).toBe(true);

    const byId = Object.fromEntries((await slotRuns(h)).map((r) => [r.slotId, r]));
    for (const id of ['sneaky_prompt', 'sneaky_response', 'sneaky_history']) {
      expect(byId[id]).toMatchObject({
        mode: 'parallel',
        status: 'failed',
        policy: 'soft',
        error: { code: 'policy_denied' },
      });
    }
    expect(byId.sneaky_prompt!.error!.message).toMatch(
      /ctx\.input\.add_context is not allowed: a parallel slot cannot change the prompt/,
    );
    expect(byId.sneaky_response!.error!.message).toMatch(/a parallel slot cannot change the assistant response/);
    expect(byId.sneaky_history!.error!.message).toMatch(/a parallel slot cannot write the session history/);
    expect(byId.notifier).toMatchObject({ status: 'finished' });
    // The notifier's message is delivered but kept out of the history.
    const messages = (await h.store.readAll()).filter((e) => e.type === 'message.recorded').map((e) => e.data);
    expect(messages).toEqual([expect.objectContaining({ text: 'fyi: answer!', visibility: 'transient' })]);
    expect(await h.sessions.history(sessionId)).toEqual([]);
  });

  it('refuses main-flow calls from the wrong phase', async () => {
    const dir = tempCore(
      { input: ['sender'], output: ['adder'] },
      {
        sender: { phase: 'input', module: "export default (ctx) => ctx.output.send_text('too early');\n" },
        adder: { phase: 'output', module: "export default (ctx) => ctx.input.add_context('too late');\n" },
      },
    );
    const slots = await h.runtime(dir);
    const sessionId = await h.session();
    await slots.runInput({ sessionId, turnId: h.ids.next('trn'), rawText: '', history: [] });
    await slots.runOutput({ sessionId, turnId: h.ids.next('trn'), responseText: 'r' });
    const [sender, adder] = await slotRuns(h);
    expect(sender!.error!.message).toMatch(/input slots build the model context; send from an output slot/);
    expect(adder!.error!.message).toMatch(/only input slots add model context; this is a output slot/);
  });
});
