import { describe, expect, it } from 'vitest';
import { renderSimulateReport, simulate, simulateSeed } from '../src/index.js';

// The simulator can fail: a deliberately broken delivery sink is caught, named by its seed, with the shortest
// trace fast-check shrinks it to.
describe('an injected bug is caught with its seed and a shrunk trace', () => {
  it('a delivery acknowledged before it is sent', async () => {
    const report = await simulate({ seeds: 6, seed: 1, bug: 'ackBeforeSend' });
    expect(report.ok).toBe(false);
    const failed = report.runs.find((r) => !r.ok);
    expect(failed?.failure?.problems.join('\n')).toMatch(/acknowledged \(sent\) but the sink never received it/);
    // The shortest trace: a turn (whose answer is queued for delivery), then the dispatch that acknowledges it.
    expect(failed?.failure?.trace.length).toBeLessThanOrEqual(failed?.failure?.shrunkFrom ?? 0);
    expect(failed?.failure?.trace.at(-1)).toMatch(/^dispatch deliveries/);
    expect(failed?.failure?.trace.some((t) => t.startsWith('submit'))).toBe(true);
    const text = renderSimulateReport(report, 'the bundled core').join('\n');
    expect(text).toContain(`FAIL seed ${failed?.seed}`);
    expect(text).toContain(`reproduce: demiurge simulate --seed ${failed?.seed} --seeds 1`);
    // The seed reproduces it alone, with the same log.
    const again = await simulateSeed(failed?.seed ?? 0, { bug: 'ackBeforeSend' });
    expect(again.ok).toBe(false);
    expect(again.hash).toBe(failed?.hash);
    expect(again.failure?.trace).toEqual(failed?.failure?.trace);
  });

  it('a delivery performed twice', async () => {
    const report = await simulate({ seeds: 6, seed: 1, bug: 'doubleSend' });
    const failed = report.runs.find((r) => !r.ok);
    expect(failed?.failure?.problems.join('\n')).toMatch(/delivery dlv_\w+ performed 2 times/);
  });

  it('without the bug, the same seeds pass', async () => {
    const report = await simulate({ seeds: 6, seed: 1 });
    expect(report.runs.filter((r) => !r.ok).map((r) => r.failure)).toEqual([]);
  });
});
