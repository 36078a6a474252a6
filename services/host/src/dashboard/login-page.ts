import { esc } from './html.js';

/**
 * Whether a request without a valid token gets the login page: a page a browser opens (not the API, not the
 * partials and the event stream the pages' script fetches, which answer JSON 401).
 */
export function wantsLoginPage(method: string, path: string): boolean {
  return (method === 'GET' || method === 'HEAD') && !path.startsWith('/api/') && !path.startsWith('/partials/');
}

/** Where the login form sends the browser back to: a path of this dashboard, else `/`. */
export function safeNext(next: string | undefined): string {
  return next?.startsWith('/') && !next.startsWith('//') && !next.includes('\\') ? next : '/';
}

/**
 * The page a browser gets (status 401) when it has no valid token: paste the token (from `tokenPath`), or open
 * the login link `demiurge serve --http` printed. The form sends the token the way the login link does
 * (`/?token=…`, which sets the cookie), and comes back to `next`.
 */
export function loginPage(options: { tokenPath: string; next: string; error?: string }): string {
  const error = options.error ? `<p class="error" id="login-error">${esc(options.error)}</p>` : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Log in · demiurge</title>
<style>body{font:14px system-ui,sans-serif;margin:0;color:#222}header{background:#223;color:#fff;padding:.5em 1em}
main{padding:1em 1em;max-width:42em}input{font:inherit;width:26em;padding:.3em}button{font:inherit;padding:.3em 1em}
code{background:#f4f4f8;padding:0 .2em}.error{color:#a00}</style></head>
<body><header>demiurge</header><main><h1>Log in to the dashboard</h1>${error}
<p>This dashboard needs the access token of the host serving it. Open the login link
<code>demiurge serve --http</code> printed (<code>http://…/?token=…</code>), or paste the token here: it is in
<code>${esc(options.tokenPath)}</code> (a new one at each start of <code>serve</code>).</p>
<form method="get" action="/" id="login"><input type="hidden" name="next" value="${esc(options.next)}">
<input type="password" name="token" placeholder="token" autocomplete="off" required autofocus>
<button>Log in</button></form></main></body></html>`;
}
