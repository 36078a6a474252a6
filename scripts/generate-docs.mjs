#!/usr/bin/env node
// Regenerates the docs derived from code (build first; `pnpm run docs:generate` does):
// docs/events.md from the zod event schemas, docs/lifecycle.md from the lifecycle machines.
// Tests in @demiurge/contracts and @demiurge/lifecycle fail while a committed file is stale.
import { writeFileSync } from 'node:fs';
import { domainEvents, renderEventCatalog } from '@demiurge/contracts';
import { renderLifecycleDoc } from '@demiurge/lifecycle';

for (const [file, text] of [
  ['events.md', renderEventCatalog(domainEvents)],
  ['lifecycle.md', renderLifecycleDoc()],
]) {
  const target = new URL(`../docs/${file}`, import.meta.url);
  writeFileSync(target, text);
  console.log(`wrote ${target.pathname}`);
}
