import { describe, expect, it } from 'vitest';
import { renderSimulateReport, type SimBug, simulate, simulateSeed } from '../src/index.js';

// The simulator can fail: a deliberately broken delivery sink is caught, named by its seed, with the shortest
// trace fast-check shrinks it to; the same seeds pass without the bug.
async function caught(bug: SimBug) {
  const scan = await simulate({ seeds: 12, seed: 1, bug, shrink: false });
  const failed = scan.runs.find((r) => !r.ok);
  expect(failed, `no seed of 1..12 caught ${bug}`).toBeDefined();
  const seed = failed?.seed ?? 0;
  const shrunk = await simulateSeed(seed, { bug });
  return { scan, seed, shrunk };
}

describe('an injected bug is caught with its seed and a shrunk trace', () => {
  it('a delivery acknowledged before it is sent', async () => {
    const { scan, seed, shrunk } = await caught('ackBeforeSend');
    expect(shrunk.ok).toBe(false);
    expect(shrunk.failure?.problems.join('\n')).toMatch(/acknowledged \(sent\) but the sink never received it/);
    // The shortest trace: a turn (whose answer is queued for delivery), then the dispatch that acknowledges it.
    expect(shrunk.failure?.trace).toEqual(['submit (tools: none)', 'dispatch deliveries (sink ok)']);
    expect(shrunk.failure?.shrunkFrom).toBeGreaterThanOrEqual(2);
    const text = renderSimulateReport({ ...scan, runs: [shrunk] }, 'the bundled core').join('\n');
    expect(text).toContain(`FAIL seed ${seed}`);
    expect(text).toContain('1. submit (tools: none)\n       2. dispatch deliveries (sink ok)');
    expect(text).toContain(`reproduce: demiurge simulate --seed ${seed} --seeds 1`);
    // The seed reproduces it alone, with the same log.
    const again = await simulateSeed(seed, { bug: 'ackBeforeSend' });
    expect(again.hash).toBe(shrunk.hash);
    expect(again.failure?.trace).toEqual(shrunk.failure?.trace);
    // Without the bug, the same seed passes.
    expect((await simulateSeed(seed)).ok).toBe(true);
  });

  it('a delivery performed twice', async () => {
    const { seed, shrunk } = await caught('doubleSend');
    expect(shrunk.failure?.problems.join('\n')).toMatch(/delivery dlv_\w+ performed 2 times/);
    expect(shrunk.failure?.trace).toEqual(['submit (tools: none)', 'dispatch deliveries (sink ok)']);
    expect((await simulateSeed(seed)).ok).toBe(true);
  });
}, 600_000);
