#!/usr/bin/env node
// Regenerates the docs that are derived from code: docs/events.md from the zod event schemas.
import { writeFileSync } from 'node:fs';
import { domainEvents, renderEventCatalog } from '@demiurge/contracts';

const target = new URL('../docs/events.md', import.meta.url);
writeFileSync(target, renderEventCatalog(domainEvents));
console.log(`wrote ${target.pathname}`);
