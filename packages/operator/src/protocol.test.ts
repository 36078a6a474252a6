import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPERATOR_PACKAGE_VERSION } from './protocol.js';

describe('protocol constants', () => {
  it("report this package's version by default", () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(OPERATOR_PACKAGE_VERSION).toBe(pkg.version);
  });
});
