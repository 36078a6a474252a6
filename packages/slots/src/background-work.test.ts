import { createFakeClock } from '@demiurge/contracts/testing';
import { describe, expect, it } from 'vitest';
import { type BackgroundFailure, BackgroundWorkRuntime } from './background-work.js';

const later = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe('BackgroundWorkRuntime', () => {
  it('tracks promises by name until they settle, and drains them', async () => {
    const clock = createFakeClock();
    const background = new BackgroundWorkRuntime({ clock });
    const first = background.track('slot:output/audit_log', later(20, 'a'));
    clock.advance(5);
    background.track('delivery:dlv_1', later(40, 'b'));
    expect(background.active().map((w) => [w.name, w.startedAt - clock.now()])).toEqual([
      ['slot:output/audit_log', -5],
      ['delivery:dlv_1', 0],
    ]);
    expect(await first).toBe('a'); // track returns the promise itself
    expect(background.active().map((w) => w.name)).toEqual(['delivery:dlv_1']);
    const report = await background.drain(1000);
    expect(report).toEqual({ drained: true, settled: 1, failed: [], stillRunning: [] });
    expect(background.active()).toEqual([]);
  });

  it('waits for work tracked while it drains', async () => {
    const background = new BackgroundWorkRuntime();
    background.track(
      'first',
      later(10, undefined).then(() => background.track('second', later(20, undefined))),
    );
    const report = await background.drain(1000);
    expect(report).toMatchObject({ drained: true, settled: 2 });
  });

  it('reports what was still running when the timeout ran out', async () => {
    const background = new BackgroundWorkRuntime();
    background.track('quick', later(5, undefined));
    background.track('stuck', new Promise(() => {}));
    const began = Date.now();
    const report = await background.drain(100);
    expect(Date.now() - began).toBeGreaterThanOrEqual(95);
    expect(report.drained).toBe(false);
    expect(report.settled).toBe(1);
    expect(report.stillRunning.map((w) => w.name)).toEqual(['stuck']);
  });

  it('never loses a rejection: onError sees it and the next drain reports it once', async () => {
    const seen: BackgroundFailure[] = [];
    const background = new BackgroundWorkRuntime({ onError: (f) => seen.push(f) });
    const boom = new Error('boom');
    await background.track('failing', Promise.reject(boom)).catch(() => undefined);
    await later(0, undefined);
    expect(seen).toEqual([{ name: 'failing', error: boom }]);
    expect((await background.drain(10)).failed).toEqual([{ name: 'failing', error: boom }]);
    expect((await background.drain(10)).failed).toEqual([]);
  });

  it('drains at once when nothing runs', async () => {
    expect(await new BackgroundWorkRuntime().drain(0)).toEqual({
      drained: true,
      settled: 0,
      failed: [],
      stillRunning: [],
    });
  });
});
