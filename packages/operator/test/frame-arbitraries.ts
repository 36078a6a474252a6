import fc from 'fast-check';
import { operatorMethodNames } from '../src/index.js';
import { fakeId } from './fake-backend.js';

/**
 * fast-check arbitraries of operator request lines, built from the protocol's real frame shapes
 * (`{ id, method, params }` with each method's params) and then mutated: a field dropped, a field of the
 * wrong type, an unknown key, a huge or odd value, a bad id, an unknown method, a non-object, broken JSON.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const ulidTail = fc.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/);
const goodId = (prefix: string) =>
  fc.oneof(
    fc.constant(fakeId(prefix)),
    ulidTail.map((t) => `${prefix}_${t}`),
  );
/** Ids that look like ids but are not: wrong prefix, wrong length, lower case, empty, a path. */
const badId = fc.oneof(
  fc.constant(''),
  fc.constant('ses_'),
  fc.constant('ses_../../etc/passwd'),
  ulidTail.map((t) => `run_${t}`),
  ulidTail.map((t) => `ses_${t.toLowerCase()}`),
  ulidTail.map((t) => `ses_${t}X`),
  fc.string({ maxLength: 40 }),
);
const odd: fc.Arbitrary<Json> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constant(1e308),
  fc.constant(-0),
  fc.constant(Number.MAX_SAFE_INTEGER + 2),
  fc.string({ maxLength: 20 }),
  fc.constant('\u0000\u2028\ud800'),
  fc.constant('__proto__'),
  fc.constant([] as Json),
  fc.constant({} as Json),
  fc.constant({ __proto__: { polluted: true } } as unknown as Json),
  fc.array(fc.integer(), { maxLength: 3 }),
);
const huge = fc.integer({ min: 10_000, max: 200_000 }).map((n) => 'x'.repeat(n));
const text = fc.oneof(
  fc.string({ minLength: 1, maxLength: 30 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }),
);

/** Valid params of every method (the shapes of operator-params.ts). */
const validParams: Record<string, fc.Arbitrary<Record<string, Json>>> = {
  'operator.initialize': fc.record(
    {
      protocol_version: fc.constant(1),
      client: fc.record({ name: text, version: text }),
      session_id: goodId('ses'),
    },
    { requiredKeys: ['protocol_version', 'client'] },
  ),
  'operator.submit': fc.record({ session_id: goodId('ses'), text, plan: fc.boolean() }, { requiredKeys: ['text'] }),
  'operator.reply_prompt': fc.record({ prompt_id: text, text: fc.string({ maxLength: 20 }) }),
  'operator.reply_approval': fc.record(
    { approval_id: goodId('apr'), decision: fc.constantFrom('grant', 'deny'), note: text },
    { requiredKeys: ['approval_id', 'decision'] },
  ),
  'operator.interrupt': fc.record({ session_id: goodId('ses') }),
  'operator.cancel': fc.record(
    { run_id: goodId('run'), task_id: goodId('tsk'), session_id: goodId('ses'), reason: text },
    { requiredKeys: [] },
  ),
  'operator.status': fc.record({ session_id: goodId('ses') }, { requiredKeys: [] }),
  'operator.history': fc.record(
    { session_id: goodId('ses'), limit: fc.integer({ min: 1, max: 1000 }) },
    { requiredKeys: ['session_id'] },
  ),
  'operator.compact': fc.record({ session_id: goodId('ses') }),
  // shutdown is left out of the valid set so that a run keeps its server; a mutated one still comes.
  'operator.shutdown': fc.record({ reason: text }, { requiredKeys: [] }).map((p) => ({ ...p, reason: 42 }) as never),
};

/** One mutation of a params object. */
type Mutation = (params: Record<string, Json>) => fc.Arbitrary<Json>;

const mutations: Mutation[] = [
  (p) => fc.constant(p),
  // drop a field
  (p) => {
    const keys = Object.keys(p);
    if (keys.length === 0) return fc.constant(p);
    return fc.constantFrom(...keys).map((k) => {
      const { [k]: _dropped, ...rest } = p;
      return rest;
    });
  },
  // a field of the wrong type / odd value
  (p) => {
    const keys = Object.keys(p);
    if (keys.length === 0) return odd.map((v) => ({ session_id: v }));
    return fc.tuple(fc.constantFrom(...keys), odd).map(([k, v]) => ({ ...p, [k]: v }));
  },
  // an unknown key (a camelCase twin, a prototype key, anything)
  (p) =>
    fc
      .tuple(fc.constantFrom('sessionId', 'constructor', 'toString', 'extra', 'Text', 'hasOwnProperty'), odd)
      .map(([k, v]) => ({ ...p, [k]: v })),
  // a huge value
  (p) => {
    const keys = Object.keys(p);
    if (keys.length === 0) return huge.map((h) => ({ reason: h }));
    return fc.tuple(fc.constantFrom(...keys), huge).map(([k, v]) => ({ ...p, [k]: v }));
  },
  // a bad id in an id field
  (p) => {
    const ids = Object.keys(p).filter((k) => k.endsWith('_id'));
    if (ids.length === 0) return badId.map((b) => ({ ...p, session_id: b }));
    return fc.tuple(fc.constantFrom(...ids), badId).map(([k, v]) => ({ ...p, [k]: v }));
  },
  // params that are not an object
  () => odd,
];

const requestId: fc.Arbitrary<Json> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 1_000_000 }) },
  { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 12 }) },
  { weight: 1, arbitrary: odd },
);

const method = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...operatorMethodNames) },
  { weight: 1, arbitrary: fc.constantFrom('operator.command', 'operator.nope', 'submit', 'operator.', '') },
  { weight: 1, arbitrary: fc.oneof(odd, huge) },
);

/** A request object from a real shape, then mutated (its params, its id, its method, its keys). */
export const requestObject: fc.Arbitrary<Record<string, Json>> = method.chain((m) => {
  const params = typeof m === 'string' && Object.hasOwn(validParams, m) ? validParams[m]! : fc.constant({});
  return fc
    .tuple(
      params.chain((p) => fc.constantFrom(...mutations).chain((mutate) => mutate(p))),
      requestId,
      fc.boolean(),
      fc.constantFrom('none', 'no-id', 'no-method', 'no-params', 'extra'),
    )
    .map(([p, id, withParams, shape]) => {
      const frame: Record<string, Json> = { id, method: m as Json };
      if (withParams || shape === 'extra') frame.params = p;
      if (shape === 'no-id') delete frame.id;
      if (shape === 'no-method') delete frame.method;
      if (shape === 'no-params') delete frame.params;
      if (shape === 'extra') frame.jsonrpc = '2.0';
      return frame;
    });
});

/** One request line: mostly JSON of a mutated request; sometimes not JSON, not an object, or blank. */
export const requestLine: fc.Arbitrary<string> = fc.oneof(
  { weight: 10, arbitrary: requestObject.map((r) => JSON.stringify(r)) },
  {
    weight: 1,
    arbitrary: requestObject.chain((r) => {
      const json = JSON.stringify(r);
      return fc.integer({ min: 0, max: Math.max(0, json.length - 1) }).map((cut) => json.slice(0, cut));
    }),
  },
  { weight: 1, arbitrary: fc.oneof(odd, fc.array(odd, { maxLength: 3 })).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }).filter((s) => !s.includes('\n')) },
);

/** The valid params of a method, for a test that needs a frame that must be accepted. */
export function validParamsOf(name: string): fc.Arbitrary<Record<string, Json>> | undefined {
  return Object.hasOwn(validParams, name) ? validParams[name] : undefined;
}
