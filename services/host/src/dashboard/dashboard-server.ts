import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context, Hono } from 'hono';
import type { Subscription } from 'rxjs';
import type { DemiurgeApp } from '../app.js';
import { createOperatorBackend } from '../gateway.js';
import { registerActions } from './actions.js';
import { listenError, parseHttpAddress } from './address.js';
import { DashboardHttpError, errorAnswer } from './http-errors.js';
import { loginPage, safeNext, wantsLoginPage } from './login-page.js';
import { registerPages } from './pages.js';
import { dashboardReads } from './read-models.js';
import { tokenMatches, writeDashboardToken } from './token.js';

/** How often `/api/stream` pings an idle client. */
const STREAM_PING_MS = 15_000;

/** The cookie the login link sets. */
export const TOKEN_COOKIE = 'demiurge_token';

/** A running dashboard: where it listens, the login link, and how to stop it. */
export interface DashboardServer {
  /** `http://HOST:PORT` as bound (port 0 resolved). */
  readonly url: string;
  /** `url/?token=...`: opens the pages and sets the session cookie. */
  readonly loginUrl: string;
  readonly tokenPath: string;
  /** Ends the event streams and stops listening. */
  close(): Promise<void>;
}

/**
 * Serves the web dashboard and its JSON API on `addr` (`HOST:PORT`) from this host process: a fresh token in
 * `tokenPath` (0600) is required on every request (`Authorization: Bearer`, or the cookie the login link sets);
 * state-changing requests from another origin are refused. Hono is loaded here, on use only.
 */
export async function serveDashboard(
  app: DemiurgeApp,
  options: { addr: string; tokenPath: string },
): Promise<DashboardServer> {
  const { host, port } = parseHttpAddress(options.addr);
  const [{ Hono }, { getCookie, setCookie }, { streamSSE }, { createAdaptorServer }] = await Promise.all([
    import('hono'),
    import('hono/cookie'),
    import('hono/streaming'),
    import('@hono/node-server'),
  ]);
  const token = writeDashboardToken(options.tokenPath);
  const backend = createOperatorBackend(app);
  const reads = dashboardReads(app, backend);
  const streams = new Set<{ sub?: Subscription; end: () => void }>();
  const web: Hono = new Hono();

  web.onError((error, c) => {
    const { status, body } = errorAnswer(error);
    if (status === 500) app.logger.error('dashboard request failed', { path: c.req.path, error: body.error.message });
    return c.json(body, status as 500);
  });
  web.notFound((c) => c.json({ error: { code: 'not_found', message: `no route ${c.req.method} ${c.req.path}` } }, 404));

  // A page opened without a valid token gets the login page (HTML); the API answers JSON 401.
  const login = (c: Context, error?: string) =>
    c.html(
      loginPage({
        tokenPath: options.tokenPath,
        next: safeNext(c.req.query('next') ?? c.req.path),
        ...(error ? { error } : {}),
      }),
      401,
    );
  web.use('*', async (c, next) => {
    const presented = c.req.path === '/' ? c.req.query('token') : undefined;
    if (presented !== undefined) {
      if (!tokenMatches(token, presented.trim()))
        return login(c, 'That token is wrong (or from an earlier start of serve).');
      setCookie(c, TOKEN_COOKIE, token, { httpOnly: true, sameSite: 'Strict', path: '/' });
      return c.redirect(safeNext(c.req.query('next')), 303);
    }
    const bearer = /^Bearer (.+)$/.exec(c.req.header('authorization') ?? '')?.[1];
    if (!tokenMatches(token, bearer ?? getCookie(c, TOKEN_COOKIE))) {
      if (wantsLoginPage(c.req.method, c.req.path)) return login(c);
      throw new DashboardHttpError(
        401,
        'unauthorized',
        `a token is required: "Authorization: Bearer <token>" (the token is in ${options.tokenPath}), or open the login link "demiurge serve --http" printed`,
      );
    }
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') refuseCrossSite(c);
    await next();
  });

  web.get('/api/status', async (c) => c.json(await reads.status()));
  web.get('/api/sessions', async (c) => c.json({ sessions: await reads.sessions() }));
  web.get('/api/sessions/:id', async (c) => c.json(await reads.session(c.req.param('id'))));
  web.get('/api/runs', async (c) => c.json({ runs: await reads.runs() }));
  web.get('/api/tasks', async (c) => c.json({ tasks: await reads.tasks(c.req.query('all') === '1') }));
  web.get('/api/work', async (c) => c.json(await reads.work()));
  web.get('/api/events', async (c) => {
    const raw = c.req.query('from') ?? '1';
    const from = Number(raw);
    if (!Number.isInteger(from) || from < 1) {
      throw new DashboardHttpError(400, 'bad_request', `from: "${raw}" is not a position (an integer from 1)`);
    }
    return c.json(await reads.events(from, c.req.query('type')));
  });
  web.get('/api/stream', (c) =>
    streamSSE(c, async (sse) => {
      const entry: { sub?: Subscription; end: () => void } = { end: () => {} };
      const ended = new Promise<void>((resolve) => {
        entry.end = resolve;
      });
      streams.add(entry);
      sse.onAbort(() => entry.end());
      // A write to a client that went away ends this stream (never an unhandled rejection in the host).
      const send = (event: string, data: unknown, id?: string) =>
        sse.writeSSE({ event, data: JSON.stringify(data), ...(id ? { id } : {}) }).catch(() => entry.end());
      entry.sub = app.store.events$.subscribe((e) => {
        void send('event', { position: e.position, type: e.type, streamId: e.streamId, meta: e.meta }, `${e.position}`);
      });
      // A ping every 15 s keeps idle connections open through proxies and finds clients that are gone.
      const ping = setInterval(() => void send('ping', {}), STREAM_PING_MS);
      ping.unref();
      await send('ready', { head: await app.store.head() });
      await ended;
      clearInterval(ping);
      entry.sub.unsubscribe();
      streams.delete(entry);
    }),
  );

  registerActions(web, app, backend);
  registerPages(web, reads);

  const server = createAdaptorServer({ fetch: web.fetch, hostname: host, port }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(listenError(options.addr, error)));
    server.listen(port, host, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const url = `http://${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`;
  return {
    url,
    loginUrl: `${url}/?token=${token}`,
    tokenPath: options.tokenPath,
    async close() {
      for (const s of streams) s.end();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** State-changing requests must come from the dashboard's own origin (or from no browser at all). */
function refuseCrossSite(c: Context): void {
  const origin = c.req.header('origin');
  const site = c.req.header('sec-fetch-site');
  const own = `http://${c.req.header('host')}`;
  if ((origin !== undefined && origin !== own) || site === 'cross-site' || site === 'same-site') {
    throw new DashboardHttpError(403, 'cross_site', `a state-changing request from ${origin ?? site} is refused`);
  }
}
