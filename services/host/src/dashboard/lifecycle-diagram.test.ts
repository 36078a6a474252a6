import { lifecycles, taskLifecycle, transitionTable } from '@demiurge/lifecycle';
import { describe, expect, it } from 'vitest';
import { lifecycleDiagram } from './lifecycle-diagram.js';
import { safeNext, wantsLoginPage } from './login-page.js';

const count = (svg: string, pattern: RegExp) => svg.match(pattern)?.length ?? 0;

describe('lifecycleDiagram: drawn from the machine', () => {
  it('has a box per state and a labelled arrow per moving transition, for every lifecycle', () => {
    for (const lifecycle of lifecycles) {
      const svg = lifecycleDiagram(lifecycle, '');
      const moves = transitionTable(lifecycle).filter((r) => r.kind !== 'stay');
      expect(count(svg, /<g class="state/g), lifecycle.aggregate).toBe(lifecycle.states.length);
      expect(count(svg, /<g class="edge/g)).toBe(new Set(moves.map((r) => `${r.from}>${r.to}`)).size);
      for (const r of moves) expect(svg).toContain(`data-from="${r.from}" data-to="${r.to}"`);
      for (const r of moves) expect(svg).toContain(`>${r.event}`);
      expect(svg).not.toContain('NaN');
    }
  });

  it('highlights the current state and the arrows the machine allows from it', () => {
    const svg = lifecycleDiagram(taskLifecycle, 'cancelled');
    expect(svg.match(/data-state="([a-z_]+)" data-current="true"/)?.[1]).toBe('cancelled');
    const hot = [...svg.matchAll(/<g class="edge hot" data-from="([a-z_]+)" data-to="([a-z_]+)"/g)];
    const allowed = transitionTable(taskLifecycle).filter((r) => r.from === 'cancelled' && r.kind !== 'stay');
    expect(hot.map((m) => m[2]).sort()).toEqual([...new Set(allowed.map((r) => r.to))].sort());
    expect(hot.every((m) => m[1] === 'cancelled')).toBe(true);
  });
});

describe('the login page', () => {
  it('is for pages a browser opens, never for the API, and sends it back only to a path of the dashboard', () => {
    expect(wantsLoginPage('GET', '/tasks')).toBe(true);
    expect(wantsLoginPage('GET', '/api/status')).toBe(false);
    expect(wantsLoginPage('GET', '/partials/tasks')).toBe(false);
    expect(wantsLoginPage('POST', '/tasks')).toBe(false);
    expect(safeNext('/runs')).toBe('/runs');
    for (const bad of [undefined, '', 'http://evil.example/', '//evil.example', '/\\evil.example']) {
      expect(safeNext(bad)).toBe('/');
    }
  });
});
