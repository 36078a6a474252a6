import { describe, expect, it } from 'vitest';
import { scopesOverlap } from './scopes.js';

describe('scopesOverlap', () => {
  it('matches the same scope and nested paths, by whole segments', () => {
    expect(scopesOverlap('/w/app', '/w/app')).toBe(true);
    expect(scopesOverlap('/w/app/', '/w/app')).toBe(true);
    expect(scopesOverlap('/w/app', '/w/app/src')).toBe(true);
    expect(scopesOverlap('/w/app/src', '/w/app')).toBe(true);
    expect(scopesOverlap('/w/app', '/w/apple')).toBe(false);
    expect(scopesOverlap('/', '/w')).toBe(true);
    expect(scopesOverlap('db:main', 'db:other')).toBe(false);
  });
});
