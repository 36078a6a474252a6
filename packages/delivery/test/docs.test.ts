import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deliveryEvents } from '@demiurge/contracts';
import { deliveryLifecycle, mermaidDiagram } from '@demiurge/lifecycle';
import { expect, it } from 'vitest';

const doc = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'delivery.md'), 'utf8');

it('docs/delivery.md shows the delivery machine as it is, and names every delivery event', () => {
  expect(doc).toContain(`\`\`\`mermaid\n${mermaidDiagram(deliveryLifecycle).trimEnd()}\n\`\`\``);
  for (const event of deliveryEvents) expect(doc).toContain(event.type);
});
