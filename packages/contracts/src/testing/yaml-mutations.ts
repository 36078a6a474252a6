import fc from 'fast-check';
import { stringify } from 'yaml';

/**
 * Mutations of a YAML file's text for the fuzz tests of the YAML loaders (docs/testing-fuzz.md), shared by every YAML loader's fuzz test: the
 * document from a valid shape, written out, then broken at the text level the ways a hand-edited file
 * breaks (a tab, a cut, a duplicate key, an unknown tag, an alias bomb, a merge key, a `__proto__` key,
 * another document, a top-level scalar or list, a BOM, a very long line).
 */
export function yamlText(document: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  const written = document.map((value) => stringify(value));
  return fc.oneof(
    { weight: 6, arbitrary: written },
    {
      weight: 4,
      arbitrary: fc.tuple(written, fc.constantFrom(...textMutations)).map(([text, mutate]) => mutate(text)),
    },
    { weight: 1, arbitrary: fc.constantFrom(...whole) },
  );
}

const BOMB = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
for (let i = 1; i < 9; i++) {
  const prev = String.fromCharCode(96 + i);
  const next = String.fromCharCode(97 + i);
  BOMB.push(`${next}: &${next} [*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev}]`);
}

const lines = (text: string) => text.split('\n');
const textMutations: ReadonlyArray<(text: string) => string> = [
  (t) => t.replace(/\n {2}/, '\n\t'),
  (t) => t.slice(0, Math.floor(t.length / 2)),
  (t) => {
    const first = lines(t)[0] ?? 'x: 1';
    return `${t}${first}\n`;
  },
  (t) => `${t}extra: !!js/function 'function () {}'\n`,
  (t) => `${t}blob: !!binary aGVsbG8=\n`,
  (t) => `${t}${BOMB.join('\n')}\n`,
  (t) => `base: &base { x: 1 }\n${t}merged:\n  <<: *base\n`,
  (t) => `${t}__proto__:\n  polluted: true\n`,
  (t) => `${t}undefined_alias: *nowhere\n`,
  (t) => `${t}---\nsecond: document\n`,
  (t) => `\ufeff${t}`,
  (t) => `${t}long: ${'y'.repeat(100_000)}\n`,
  (t) => `${t}? [complex, key]\n: value\n`,
  (t) => t.replace(/: /, ': [unclosed '),
  (t) => t.replace(/\n/g, '\r\n'),
];

const whole = [
  '',
  '~',
  '42',
  'just a string',
  '- a\n- b\n',
  '{}',
  '[]',
  '!!str',
  '&a [*a]',
  'key: value\nkey: again\n',
  '\u0000\u0001',
  '%YAML 1.2\n---\n',
];

/** Odd values for a field: wrong types, edge numbers, huge or strange strings, nested junk. */
export const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.constantFrom(-1, 0, 0.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2),
  fc.string({ maxLength: 12 }),
  fc.constantFrom('', ' ', '../../etc/passwd', '\u0000', 'x'.repeat(5000), 'constructor', '__proto__'),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.integer(), { maxKeys: 3 }),
);

type Path = (string | number)[];

function leafPaths(value: unknown, path: Path = []): Path[] {
  if (Array.isArray(value)) return [path, ...value.flatMap((v, i) => leafPaths(v, [...path, i]))];
  if (typeof value === 'object' && value !== null) {
    return [path, ...Object.entries(value).flatMap(([k, v]) => leafPaths(v, [...path, k]))];
  }
  return [path];
}

function setIn(value: unknown, path: Path, replace: (old: unknown) => unknown): unknown {
  if (path.length === 0) return replace(value);
  const [head, ...rest] = path as [string | number, ...Path];
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? setIn(v, rest, replace) : v));
  const record = value as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) copy[k] = k === head ? setIn(v, rest, replace) : v;
  return copy;
}

const DELETE = Symbol('delete');
function withoutDeleted(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((v) => v !== DELETE).map(withoutDeleted);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== DELETE)
        .map(([k, v]) => [k, withoutDeleted(v)]),
    );
  }
  return value;
}

/**
 * A valid document mutated at one to three places: a value replaced by an odd one, a field removed, or an
 * unknown key added (a typo, a camelCase twin, a prototype key).
 */
export function mutatedDocument(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const one = (doc: unknown): fc.Arbitrary<unknown> => {
    const paths = leafPaths(doc);
    return fc
      .tuple(
        fc.constantFrom(...paths),
        fc.nat(2),
        oddValue,
        fc.constantFrom('extra', 'Name', 'constructor', 'toString', 'timeoutMs'),
      )
      .map(([path, kind, odd, key]) => {
        if (kind === 0) return setIn(doc, path, () => odd);
        if (kind === 1 && path.length > 0) return withoutDeleted(setIn(doc, path, () => DELETE));
        return setIn(doc, path, (old) =>
          typeof old === 'object' && old !== null && !Array.isArray(old) ? { ...old, [key]: odd } : old,
        );
      });
  };
  return valid.chain((doc) =>
    fc.integer({ min: 0, max: 3 }).chain((n) => {
      let arb: fc.Arbitrary<unknown> = fc.constant(doc);
      for (let i = 0; i < n; i++) arb = arb.chain(one);
      return arb;
    }),
  );
}
