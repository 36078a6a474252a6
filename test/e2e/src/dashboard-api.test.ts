import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demiurge, tempHome } from './cli.js';
import { type DashboardHost, startDashboard, tokenMode, tokenPath } from './dashboard-host.js';
import { type ServeProcess, startServe, writeHostHome } from './serve-process.js';

let home: ReturnType<typeof tempHome>;
let host: ServeProcess | undefined;
beforeEach(() => {
  home = tempHome();
});
afterEach(async () => {
  await host?.stop('SIGKILL');
  host = undefined;
  home.remove();
});

const head = async (h: DashboardHost) => ((await (await h.api('/api/status')).json()) as { head: number }).head;

/** Reads server-sent events from `/api/stream` until `until` holds for the events so far. */
async function streamUntil(h: DashboardHost, until: (types: string[]) => boolean, started: () => Promise<unknown>) {
  const res = await h.api('/api/stream');
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const reader = res.body!.getReader();
  const types: string[] = [];
  let buffer = '';
  let kicked = false;
  while (!until(types)) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += new TextDecoder().decode(value);
    for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
      const frame = buffer.slice(0, i);
      buffer = buffer.slice(i + 2);
      if (frame.includes('event: ready') && !kicked) {
        kicked = true;
        void started();
      }
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (frame.includes('event: event') && data) types.push((JSON.parse(data) as { type: string }).type);
    }
  }
  await reader.cancel();
  return types;
}

describe('serve --http: the dashboard API', () => {
  it('is refused without the token (clear JSON, no stack); the token file is 0600; Bearer and the login cookie work', async () => {
    writeHostHome(home.path);
    const h = await startDashboard(home.path);
    host = h;
    expect(h.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(h.login).toBe(`${h.url}/?token=${h.token}`);
    expect(tokenMode(home.path)).toBe(0o600);
    for (const path of ['/api/status', '/api/tasks', '/api/stream', '/partials/tasks']) {
      const res = await fetch(h.url + path);
      expect(res.status, path).toBe(401);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('unauthorized');
      expect(body.error.message).toContain(tokenPath(home.path));
      expect(JSON.stringify(body)).not.toMatch(/\bat .*\.js:\d+/);
    }
    // A page opened without the token is the login page (HTML, 401), naming where the token is.
    for (const path of ['/', '/tasks']) {
      const res = await fetch(h.url + path);
      expect(res.status, path).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await res.text();
      expect(html).toContain('Log in to the dashboard');
      expect(html).toContain(tokenPath(home.path));
      expect(html).toContain(`name="next" value="${path}"`);
    }
    expect((await fetch(`${h.url}/api/status`, { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    const wrong = await fetch(`${h.url}/?token=nope`, { redirect: 'manual' });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('That token is wrong');
    // The login form's request: the token and where to go back to.
    const back = await fetch(`${h.url}/?token=${h.token}&next=%2Fruns`, { redirect: 'manual' });
    expect(back.status).toBe(303);
    expect(back.headers.get('location')).toBe('/runs');
    const offsite = await fetch(`${h.url}/?token=${h.token}&next=%2F%2Fevil.example`, { redirect: 'manual' });
    expect(offsite.headers.get('location')).toBe('/');
    const status = await h.api('/api/status');
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({ host: { closing: false }, open_approvals: [], head: 0 });
    const login = await fetch(h.login, { redirect: 'manual' });
    expect(login.status).toBe(303);
    const cookie = login.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    const page = await fetch(`${h.url}/tasks`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Task board');
  }, 60_000);

  it('serves the read models and the log, streams committed events live, and refuses bad or cross-site requests without writing', async () => {
    writeHostHome(home.path);
    const h = await startDashboard(home.path);
    host = h;
    let reply: Awaited<ReturnType<typeof demiurge>> | undefined;
    const types = await streamUntil(
      h,
      (seen) => seen.includes('turn.completed'),
      async () => {
        reply = await demiurge(['run', 'hello dashboard', '--home', home.path]);
      },
    );
    expect(types).toEqual(expect.arrayContaining(['session.created', 'turn.started', 'turn.completed']));
    await expect.poll(() => reply?.code).toBe(0);
    // Clients that go away mid-stream end their streams; the host keeps serving the next commits.
    for (let i = 0; i < 3; i++) {
      const gone = new AbortController();
      const res = await h.api('/api/stream', { signal: gone.signal });
      await res.body!.getReader().read();
      gone.abort();
    }
    expect((await demiurge(['run', '<img src=x onerror=alert(1)>', '--home', home.path])).code).toBe(0);
    expect(host!.child.exitCode).toBeNull();
    const { sessions } = (await (await h.api('/api/sessions')).json()) as { sessions: { sessionId: string }[] };
    expect(sessions).toHaveLength(2);
    const first = sessions.map((x) => x.sessionId).sort()[0]!;
    const session = (await (await h.api(`/api/sessions/${first}`)).json()) as {
      messages: { role: string; text: string }[];
    };
    expect(session.messages.map((m) => m.text)).toEqual(['hello dashboard', '[fake] hello dashboard']);
    const { runs } = (await (await h.api('/api/runs')).json()) as { runs: { status: string }[] };
    expect(runs.map((r) => r.status)).toEqual(['completed', 'completed']);
    const work = (await (await h.api('/api/work')).json()) as { work: unknown[]; outbox: unknown[] };
    expect(Array.isArray(work.work) && Array.isArray(work.outbox)).toBe(true);
    expect(await (await h.api('/api/tasks')).json()).toEqual({ tasks: [] });
    const all = (await (await h.api('/api/events?from=1')).json()) as { events: { position: number }[]; head: number };
    expect(all.events.length).toBe(all.head);
    const tail = (await (await h.api(`/api/events?from=${all.head}`)).json()) as { events: { position: number }[] };
    expect(tail.events.map((e) => e.position)).toEqual([all.head]);

    // Pages escape what they show, and the event log filters by type prefix.
    const second = sessions.map((x) => x.sessionId).sort()[1]!;
    const page = await (await h.api(`/sessions/${second}`)).text();
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(page).not.toContain('<img src=x');
    const log = await (await h.api('/events?type=turn.')).text();
    const shown = [...log.matchAll(/<td><code>([a-z_.]+)<\/code><\/td>/g)].map((m) => m[1]);
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.every((type) => type!.startsWith('turn.'))).toBe(true);
    const before = await head(h);
    const { runId } = (runs as unknown as { runId: string }[])[0]!;
    const pause = await h.api(`/api/runs/${runId}/pause`, { method: 'POST' });
    expect(pause.status).toBe(409);
    expect(((await pause.json()) as { error: { message: string } }).error.message).toMatch(
      new RegExp(`^run ${runId} is completed: it cannot be paused \\(the run machine allows run\\.archived`),
    );
    const resolve = await h.api('/api/work/wrk_01M8SSAV7K7MAAT7F89MZGFVM4/resolve', {
      method: 'POST',
      body: JSON.stringify({ decision: 'maybe' }),
    });
    expect(resolve.status).toBe(400);
    const bad = await h.api('/api/events?from=zero');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: { code: 'bad_request', message: 'from: "zero" is not a position (an integer from 1)' },
    });
    const crossSite = await h.api('/api/tasks/tsk_01M8SSAV7K7MAAT7F89MZGFVM4/cancel', {
      method: 'POST',
      headers: { origin: 'http://evil.example' },
    });
    expect(crossSite.status).toBe(403);
    expect(((await crossSite.json()) as { error: { code: string } }).error.code).toBe('cross_site');
    const missing = await h.api('/api/tasks/tsk_01M8SSAV7K7MAAT7F89MZGFVM4/cancel', { method: 'POST' });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('not_found');
    const badId = await h.api('/api/approvals/nope/grant', { method: 'POST', body: '{}' });
    expect(badId.status).toBe(400);
    expect(await (await h.api('/api/nope')).json()).toEqual({
      error: { code: 'not_found', message: 'no route GET /api/nope' },
    });
    expect(await head(h)).toBe(before);
  }, 60_000);

  it('is off unless asked: plain serve writes no token and names no URL; config.yaml http.addr turns it on', async () => {
    writeHostHome(home.path);
    host = await startServe(home.path);
    expect(host.ready.http).toBeUndefined();
    expect(existsSync(tokenPath(home.path))).toBe(false);
    await host.stop();
    writeHostHome(home.path, { extra: ['http:', '  addr: 127.0.0.1:0'] });
    const h = await startDashboard(home.path, home.path, []);
    host = h;
    expect((await h.api('/api/status')).status).toBe(200);
  }, 60_000);

  it('refuses a bad --http address before the host starts, and an address in use in one line (exit 2)', async () => {
    writeHostHome(home.path);
    const bad = await demiurge(['serve', '--home', home.path, '--http', 'localhost']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe('demiurge: --http: "localhost" is not HOST:PORT (for example 127.0.0.1:7780)');
    expect(existsSync(join(home.path, 'runtime', 'runtime.sqlite3'))).toBe(false);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    try {
      const busy = await demiurge(['serve', '--home', home.path, '--http', `127.0.0.1:${port}`]);
      expect(busy.code).toBe(2);
      expect(busy.stderr).toContain(`the dashboard cannot listen on 127.0.0.1:${port}: the address is in use`);
      expect(busy.stderr).not.toMatch(/unexpected|\bat .*:\d+:\d+/);
    } finally {
      taken.close();
    }
  }, 60_000);
});
