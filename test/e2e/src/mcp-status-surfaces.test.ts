import { afterEach, describe, expect, it } from 'vitest';
import { tempHome } from './cli.js';
import { type DashboardHost, startDashboard } from './dashboard-host.js';
import { writeChangingHome } from './mcp-home.js';
import { INIT, rawGateway, request } from './serve-process.js';

let home: ReturnType<typeof tempHome> | undefined;
let host: DashboardHost | undefined;
afterEach(async () => {
  await host?.stop('SIGKILL');
  home?.remove();
  home = host = undefined;
});

/** The original TUI's handshake (no `client`: the session-bound dialect). */
const HANDSHAKE = { protocol_version: 1, build_stamp: 'demiurge-operator-v1' };

const dyn = {
  server: 'dyn',
  state: 'running',
  transport: 'stdio',
  tools: 2,
  crashes: 0,
  attempts: 1,
  last_reason: null,
  mcp_server_id: expect.stringMatching(/^mcs_/),
};

describe('the MCP servers of the core on every status surface of a serving host (as demiurge status shows them)', () => {
  it('operator.status, the session snapshot of the original TUI and /status, the dashboard /api/status and page', async () => {
    home = tempHome();
    const workspace = writeChangingHome(home.path, [{ match: 'never', content: 'unused' }]);
    host = await startDashboard(home.path, workspace);

    const api = (await (await host.api('/api/status')).json()) as { mcp_servers: unknown[] };
    expect(api.mcp_servers).toEqual([expect.objectContaining(dyn)]);
    const page = await (await host.api('/')).text();
    expect(page).toMatch(/<h2>MCP servers<\/h2>.*dyn.*running/s);

    // The project dialect: operator.status.
    const gw = await rawGateway(host.socket);
    gw.write(request(1, 'operator.initialize', INIT) + request(2, 'operator.status', {}));
    const status = await gw.take((f) => f.id === 2);
    expect((status.result as { mcp_servers: unknown[] }).mcp_servers).toEqual([expect.objectContaining(dyn)]);
    gw.close();

    // The original TUI's dialect: the snapshot (initialize's result and operator.status events) carries them as an
    // extension field the TUI ignores; /status prints them.
    const tui = await rawGateway(host.socket);
    tui.write(request(1, 'operator.initialize', HANDSHAKE));
    const init = await tui.take((f) => f.id === 1);
    expect(init.result).toMatchObject({ protocol_version: 1, build_stamp: 'demiurge-operator-v1', status: 'idle' });
    expect((init.result as { mcp_servers: unknown[] }).mcp_servers).toEqual([expect.objectContaining(dyn)]);
    const pushed = await tui.take((f) => f.event === 'operator.status');
    expect((pushed.payload as { mcp_servers: unknown[] }).mcp_servers).toEqual([expect.objectContaining(dyn)]);
    tui.write(request(2, 'operator.command', { text: '/status' }));
    const printed = await tui.take(
      (f) => f.event === 'operator.deliver' && JSON.stringify(f.payload).includes('mcp dyn'),
    );
    expect(JSON.stringify(printed.payload)).toContain('mcp dyn: running, 2 tools, 0 crashes');
    tui.close();
  }, 90_000);
});
