import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type ServeProcess, startServe } from './serve-process.js';

/** A `demiurge serve --http 127.0.0.1:0` child: its bound URL, login link and token. */
export interface DashboardHost extends ServeProcess {
  readonly url: string;
  readonly login: string;
  readonly token: string;
  /** `fetch(url + path)` with `Authorization: Bearer <token>`. */
  api(path: string, init?: RequestInit): Promise<Response>;
}

/** Starts the host with the dashboard on a free loopback port (`extraArgs` replace `--http 127.0.0.1:0`). */
export async function startDashboard(
  home: string,
  cwd: string = home,
  extraArgs: readonly string[] = ['--http', '127.0.0.1:0'],
): Promise<DashboardHost> {
  const serve = await startServe(home, cwd, extraArgs);
  const url = serve.ready.http as string;
  const login = serve.ready.login as string;
  const token = readFileSync(tokenPath(home), 'utf8').trim();
  const api = (path: string, init: RequestInit = {}) =>
    fetch(url + path, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } });
  return Object.assign(serve, { url, login, token, api });
}

export const tokenPath = (home: string) => join(home, 'runtime', 'http.token');

/** The permission bits of the token file. */
export const tokenMode = (home: string) => statSync(tokenPath(home)).mode & 0o777;
