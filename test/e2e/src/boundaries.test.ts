import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The layout rules of docs/architecture.md, checked on the source tree: read models are reached through the
 * typed readers of the packages that project them, only the SQLite adapter touches SQLite, only store
 * adapters use the event store's adapter entry, and no source file (tests and scripts included) grows past 400 lines.
 */
const root = resolve(import.meta.dirname, '..', '..', '..');

function sourceFiles(dir: string, pattern = /\.ts$/): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path, pattern));
    else if (pattern.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Every non-test source file of packages/ and services/, relative to the repository root. */
const files = [...sourceFiles(join(root, 'packages')), ...sourceFiles(join(root, 'services'))]
  .map((f) => relative(root, f))
  .filter((f) => /\/src\//.test(f) && !/\.test\.ts$/.test(f));
const text = (file: string) => readFileSync(join(root, file), 'utf8');
/** `packages/<name>` or `packages/projectors/<name>` or `services/<name>`: the package a file belongs to. */
const packageOf = (file: string) => file.slice(0, file.indexOf('/src/'));

describe('layout rules', () => {
  it('finds the source tree', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files).toContain('services/host/src/app.ts');
  });

  it('reads read models only through typed readers: `.projection(` only in packages that define a projector, and the stores', () => {
    const projecting = new Set(files.filter((f) => text(f).includes('defineProjector(')).map(packageOf));
    const stores = new Set(['packages/event-store', 'packages/event-store-sqlite', 'packages/event-store-postgres']);
    const offenders = files.filter(
      (f) => /\.projection\(/.test(text(f)) && !projecting.has(packageOf(f)) && !stores.has(packageOf(f)),
    );
    expect(projecting).toContain('packages/projectors/runs');
    expect(offenders).toEqual([]);
  });

  it('imports better-sqlite3 only in the SQLite adapter', () => {
    const offenders = files.filter(
      (f) => /from 'better-sqlite3'/.test(text(f)) && packageOf(f) !== 'packages/event-store-sqlite',
    );
    expect(offenders).toEqual([]);
    for (const pkg of ['services/cli', 'services/host']) {
      const manifest = JSON.parse(readFileSync(join(root, pkg, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>;
      };
      expect(Object.keys(manifest.dependencies ?? {})).not.toContain('better-sqlite3');
    }
  });

  it("casts no event's data outside contracts: folds, deciders, projectors and mappers narrow by `type`", () => {
    // The store kit's own fixture events (packages/event-store/src/testing) are not domain events.
    const exempt = new Set(['packages/contracts', 'packages/event-store']);
    const cast = /\b(?:e|ev|event|recorded|row)\.data as\b/;
    const offenders = files.filter((f) => cast.test(text(f)) && !exempt.has(packageOf(f)));
    expect(offenders).toEqual([]);
  });

  it('spawns processes only in workers (the shell tool runs through them), the CLI and the test PostgreSQL', () => {
    const spawning = files.filter((f) => /from 'node:child_process'/.test(text(f))).map(packageOf);
    expect(new Set(spawning)).toEqual(new Set(['packages/workers', 'services/cli', 'packages/event-store-postgres']));
    expect(
      files.filter((f) => /from 'node:child_process'/.test(text(f)) && f.startsWith('packages/event-store-postgres/')),
    ).toEqual(['packages/event-store-postgres/src/testing/embedded-server.ts']);
  });

  it('tells provider errors by their type, not by a code prefix', () => {
    expect(files.filter((f) => /startsWith\(['"]provider_/.test(text(f)))).toEqual([]);
  });

  it('imports pg only in the PostgreSQL adapter', () => {
    const offenders = files.filter(
      (f) => /from 'pg'/.test(text(f)) && packageOf(f) !== 'packages/event-store-postgres',
    );
    expect(offenders).toEqual([]);
  });

  it('keeps the adapter plumbing of @demiurge/event-store for store adapters', () => {
    const adapters = new Set(['packages/event-store-sqlite', 'packages/event-store-postgres']);
    const offenders = files.filter(
      (f) => text(f).includes("'@demiurge/event-store/adapter'") && !adapters.has(packageOf(f)),
    );
    expect(offenders).toEqual([]);
    const main = text('packages/event-store/src/index.ts');
    for (const plumbing of ['planAppend', 'applyOne', 'encodeDocument', 'iterateInBatches']) {
      expect(main).not.toMatch(new RegExp(`\\b${plumbing}\\b`));
    }
  });

  it('has no source file over 400 lines (packages, services, tests, scripts, agent)', () => {
    const all = ['packages', 'services', 'test', 'scripts', 'agent'].flatMap((dir) =>
      sourceFiles(join(root, dir), /\.(ts|mts|mjs|js)$/).map((f) => relative(root, f)),
    );
    expect(all.length).toBeGreaterThan(300);
    const long = all
      .map((f) => ({ file: f, lines: text(f).split('\n').length }))
      .filter((f) => f.lines > 400)
      .map((f) => `${f.file}: ${f.lines} lines`);
    expect(long).toEqual([]);
  });
});
