import { fuzzSettings, mutatedDocument, yamlText } from '@demiurge/contracts/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collectCompletion, createFakeProvider, FakeScriptError, parseFakeScript } from '../src/index.js';

/** A fake script from its real shape (docs: a list of steps with content, tool_calls, match). */
const step = fc.record(
  {
    match: fc.string({ minLength: 1, maxLength: 8 }),
    content: fc.string({ maxLength: 30 }),
    tool_calls: fc.array(
      fc.record(
        {
          name: fc.constantFrom('read_file', 'write_file', 'shell', 'no_such_tool'),
          arguments: fc.dictionary(fc.constantFrom('path', 'content', 'command'), fc.string({ maxLength: 10 })),
        },
        { requiredKeys: ['name'] },
      ),
      { maxLength: 2 },
    ),
  },
  { requiredKeys: ['content'] },
);
const script = fc.array(step, { minLength: 1, maxLength: 4 });
const SOURCE = 'fixtures/fuzz.yaml';

const warnings: string[] = [];
process.on('warning', (w) => warnings.push(w.message));

describe('fake provider script fuzz', () => {
  it('parses a script the fake plays, or refuses with a FakeScriptError naming the file, the step and the line', async () => {
    await fc.assert(
      fc.asyncProperty(yamlText(mutatedDocument(script)), async (text) => {
        let steps: ReturnType<typeof parseFakeScript>;
        try {
          steps = parseFakeScript(text, SOURCE);
        } catch (error) {
          if (!(error instanceof FakeScriptError)) {
            throw new Error(`parseFakeScript threw ${String(error)} for:\n${text.slice(0, 2000)}`, { cause: error });
          }
          expect(error.message.startsWith(`invalid fake script ${SOURCE}`)).toBe(true);
          expect(error.detail).not.toBe('');
          expect(error.message).not.toMatch(/\[object |unexpected error|\n\s+at /i);
          expect(error.message.length).toBeLessThan(800);
          return;
        }
        // A script that parses is played: every step answers, then the fake echoes.
        const provider = createFakeProvider({ script: steps });
        for (let i = 0; i <= steps.length; i++) {
          const messages = [
            { role: 'user' as const, content: 'hello' },
            ...Array.from({ length: i }, () => ({ role: 'assistant' as const, content: 'x' })),
          ];
          const completion = await collectCompletion(provider.complete({ messages, tools: [] }));
          expect(completion.finishReason).toBeDefined();
        }
      }),
      fuzzSettings('fake provider scripts', 300),
    );
    expect(warnings).toEqual([]);
  });

  it('regression (fuzz): an alias bomb is a FakeScriptError, not a ReferenceError', () => {
    const lines = ['- &a [x,x,x,x,x,x,x,x,x]'];
    for (let i = 0; i < 8; i++)
      lines.push(
        `- &b${i} [${Array(9)
          .fill(i === 0 ? '*a' : `*b${i - 1}`)
          .join(',')}]`,
      );
    expect(() => parseFakeScript(`${lines.join('\n')}\n`, SOURCE)).toThrow(FakeScriptError);
    expect(() => parseFakeScript(`${lines.join('\n')}\n`, SOURCE)).toThrow(/not valid YAML or JSON: Excessive alias/);
  });
});
