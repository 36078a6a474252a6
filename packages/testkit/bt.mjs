import { simulate } from './dist/index.js';

const t = performance.now();
const r = await simulate({ seeds: Number(process.argv[2]), seed: Number(process.argv[3]), maxActions: 8 });
console.log(
  r.ok,
  r.failures,
  Math.round(performance.now() - t),
  'ms wall',
  r.runs.filter((x) => !x.ok).map((x) => JSON.stringify({ seed: x.seed, ...x.failure }).slice(0, 2500)),
);
const b = await simulate({ seeds: 6, seed: 1, bug: 'ackBeforeSend', shrink: false });
console.log(
  'bug',
  b.runs.map((x) => x.ok),
);
