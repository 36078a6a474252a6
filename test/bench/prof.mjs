import pg from 'pg';
const stats = new Map();
const orig = pg.Client.prototype.query;
let on = false;
pg.Client.prototype.query = function (config, values, cb) {
  const text = typeof config === 'string' ? config : config.text;
  const t0 = performance.now();
  if (process.env.PREP && typeof config === 'string' && Array.isArray(values) && values.length > 0 && !/^\s*(begin|commit|rollback)/i.test(config)) {
    let h = 0; for (let i = 0; i < config.length; i++) h = (h * 31 + config.charCodeAt(i)) | 0;
    config = { name: 'q' + (h >>> 0).toString(36), text: config, values }; values = undefined;
  }
  const r = orig.call(this, config, values, cb);
  if (on && r && typeof r.then === 'function') {
    const key = text.replace(/\s+/g, ' ').slice(0, 90);
    r.then(() => { const s = stats.get(key) ?? { n: 0, ms: 0 }; s.n++; s.ms += performance.now() - t0; stats.set(key, s); }, () => {});
  }
  return r;
};
const { startTestPostgres } = await import('@demiurge/event-store-postgres/testing');
const { openPostgresEventStore } = await import('@demiurge/event-store-postgres');
const { controlPlaneProjectors, DurableWorkRuntime } = await import('@demiurge/control-plane');
const { createIdGenerator, systemClock } = await import('@demiurge/contracts');
const f = await import('./dist/fixtures.js');
const { seedWork } = await import('./dist/pg-work-bench.js');
const server = await startTestPostgres();
const what = process.argv[2];
const dump = (label, n) => { console.log(`== ${label} per op`); for (const [k, s] of [...stats].sort((a,b)=>b[1].ms-a[1].ms)) console.log((s.n/n).toFixed(2).padStart(6), (s.ms/n).toFixed(3).padStart(8),'ms', k); stats.clear(); };
if (what === 'append') {
  const store = await openPostgresEventStore({ url: await server.createDatabase(), registry: f.benchRegistry, projectors: [f.appendProjector] });
  const v = new Map();
  const go = async (n) => { for (let i = 0; i < n; i++) { const id = `s${i % 100}`; const e = v.get(id) ?? 0; await store.append({ streamType: 'bench', streamId: id, expectedVersion: e, events: [{ type: f.BENCH_TYPE, data: f.benchData(i) }] }); v.set(id, e + 1); } };
  await go(100); on = true; const t0 = performance.now(); await go(500); console.log('ms/op', (performance.now()-t0)/500); dump('append', 500);
  await store.close();
} else {
  const store = await openPostgresEventStore({ url: await server.createDatabase(), projectors: controlPlaneProjectors });
  const ids = createIdGenerator(systemClock);
  const work = new DurableWorkRuntime({ store, clock: systemClock, ids, owner: 'b' });
  await seedWork(work, ids, 400);
  const go = async (n) => { for (let i = 0; i < n; i++) { const [c] = await work.claimDue({ kind: 'task.completion', limit: 1 }); await work.succeed(c); } };
  await go(50); on = true; const t0 = performance.now(); await go(200); console.log('ms/op', (performance.now()-t0)/200); dump('claim+succeed', 200);
  await store.close();
}
await server.stop();
