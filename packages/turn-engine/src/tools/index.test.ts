import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { workspaceTools } from './index.js';

describe('workspaceTools', () => {
  it('holds the five tools with their effect classes and idempotency', () => {
    expect(workspaceTools.map((t) => [t.name, t.effect, t.idempotent])).toEqual([
      ['read_file', 'read', true],
      ['list_dir', 'read', true],
      ['write_file', 'write.file', true],
      ['edit_file', 'write.file', false],
      ['shell', 'shell', false],
    ]);
  });

  it('describes every input as a JSON Schema object the model can be sent', () => {
    for (const tool of workspaceTools) {
      const schema = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' });
      expect(schema).toMatchObject({ type: 'object' });
      expect(tool.description.length).toBeGreaterThan(20);
    }
    expect(z.toJSONSchema(workspaceTools[4]!.input, { io: 'input' })).toMatchObject({
      required: ['command'],
      properties: { timeout_seconds: { type: 'number', maximum: 600 }, background: { type: 'boolean' } },
    });
  });
});
