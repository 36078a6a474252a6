import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { lifecycles, mermaidDiagram, renderLifecycleDoc, taskLifecycle, transitionTable } from './index.js';

describe('generated lifecycle doc', () => {
  it('docs/lifecycle.md matches the machines (run `pnpm run docs:generate` to regenerate)', () => {
    const file = new URL('../../../docs/lifecycle.md', import.meta.url);
    expect(readFileSync(file, 'utf8')).toBe(renderLifecycleDoc());
  });

  it('has a section, a diagram and a table for every aggregate, and the seed invariants in words', () => {
    const doc = renderLifecycleDoc();
    for (const lifecycle of lifecycles) {
      expect(doc).toContain(`## ${lifecycle.title}\n`);
      expect(doc).toContain(`\`\`\`mermaid\n${mermaidDiagram(lifecycle)}\n\`\`\``);
    }
    expect(doc).toContain('Resume never resurrects a deleted task');
    expect(doc).toContain('Cancelled tasks leave the active board');
  });
});

describe('mermaidDiagram', () => {
  it('draws every moving edge once, creation from [*] and final states to [*]', () => {
    const lines = mermaidDiagram(taskLifecycle).split('\n');
    expect(lines[0]).toBe('stateDiagram-v2');
    expect(lines).toContain('  [*] --> created: task.submitted');
    expect(lines).toContain('  deleted --> archived: task.archived');
    expect(lines).toContain('  archived --> [*]');
    expect(lines.filter((line) => line.includes('task.log'))).toEqual([]);
    const moving = transitionTable(taskLifecycle).filter((row) => row.kind !== 'stay');
    expect(lines.filter((line) => line.includes(': '))).toHaveLength(moving.length);
  });
});
