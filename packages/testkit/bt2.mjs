import { actionsOfSeed, describeAction, simulate } from './dist/index.js';

for (let s = 1; s <= 6; s++) console.log(s, actionsOfSeed(s).map(describeAction).join(' | '));
for (const bug of ['ackBeforeSend', 'doubleSend']) {
  const b = await simulate({ seeds: 30, seed: 1, bug, shrink: false });
  console.log(
    bug,
    b.runs
      .filter((x) => !x.ok)
      .map((x) => x.seed)
      .join(','),
  );
}
const t = performance.now();
const r = await simulate({ seeds: 60, seed: 1, maxActions: 6, rebuild: 'end' });
console.log(
  r.ok,
  Math.round((performance.now() - t) / 60),
  'ms/scenario',
  r.runs.filter((x) => !x.ok).map((x) => JSON.stringify({ seed: x.seed, ...x.failure }).slice(0, 2500)),
);
