import type { NewEvent } from '@demiurge/contracts';
import { createInMemoryEventStore, type EventStore } from '@demiurge/event-store';
import { describe, expect, it } from 'vitest';
import { mcpServersProjector } from './mcp-servers.projector.js';
import { mcpServersReader } from './mcp-servers.reader.js';

const tool = (name: string) => ({ name: `fs__${name}`, tool: name, readOnly: true });

async function append(store: EventStore, id: string, events: NewEvent[]): Promise<void> {
  const version = await store.streamVersion(id);
  await store.append(
    { streamType: 'mcp_server', streamId: id, expectedVersion: version === 0 ? 'no_stream' : version, events },
    { meta: { actor: { kind: 'system', id: 'mcp' } } },
  );
}

const starting = (id: string, host: string): NewEvent => ({
  type: 'mcp.server_starting',
  data: { mcpServerId: id, server: 'fs', coreId: 'default', host, transport: 'stdio', target: 'node fs.js' },
});

describe('the mcp-servers projector', () => {
  it('keeps the latest stream of each server name, its tool count through list changes, and the open streams', async () => {
    const store = createInMemoryEventStore({ projectors: [mcpServersProjector] });
    const reader = mcpServersReader(store);
    const first = 'mcs_01JD0000000000000000000001';
    const second = 'mcs_01JD0000000000000000000002';
    await append(store, first, [
      starting(first, 'host-a'),
      { type: 'mcp.server_started', data: { mcpServerId: first, attempt: 1, tools: [tool('a'), tool('b')] } },
    ]);
    expect(await reader.latest()).toEqual([
      expect.objectContaining({ mcpServerId: first, state: 'running', tools: 2 }),
    ]);
    await append(store, first, [
      {
        type: 'mcp.tools_changed',
        data: { mcpServerId: first, tools: [tool('a'), tool('b'), tool('c')], added: ['fs__c'], removed: [] },
      },
      {
        type: 'mcp.server_crashed',
        data: { mcpServerId: first, reason: 'its process exited', nextAttempt: 2, restartInMs: 500 },
      },
    ]);
    expect(await reader.latest()).toEqual([
      expect.objectContaining({ state: 'restarting', tools: 3, crashes: 1, lastReason: 'its process exited' }),
    ]);
    // Another host starts the same server: it is the latest; the first is still open until it is stopped.
    await append(store, second, [starting(second, 'host-b')]);
    expect((await reader.latest()).map((s) => s.mcpServerId)).toEqual([second]);
    expect((await reader.open()).map((s) => s.mcpServerId).sort()).toEqual([first, second]);
    await append(store, first, [
      { type: 'mcp.server_stopped', data: { mcpServerId: first, reason: 'its host is gone' } },
    ]);
    expect((await reader.open()).map((s) => s.mcpServerId)).toEqual([second]);
    expect((await reader.latest()).map((s) => s.mcpServerId)).toEqual([second]);
    expect(await reader.get(first)).toMatchObject({ state: 'stopped', lastReason: 'its host is gone' });
  });
});
