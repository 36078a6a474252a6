/**
 * Whether two exclusive write scopes collide: the same, or one inside the other (path segments, so `/a/b`
 * collides with `/a` but `/a/bc` does not).
 *
 * @example
 * ```ts
 * scopesOverlap('/work/app', '/work/app/src'); // true
 * scopesOverlap('/work/app', '/work/apple');   // false
 * ```
 */
export function scopesOverlap(a: string, b: string): boolean {
  const x = trimSlash(a);
  const y = trimSlash(b);
  return x === y || x.startsWith(`${y}/`) || y.startsWith(`${x}/`) || x === '' || y === '';
}

function trimSlash(s: string): string {
  return s.length > 1 && s.endsWith('/') ? trimSlash(s.slice(0, -1)) : s === '/' ? '' : s;
}
