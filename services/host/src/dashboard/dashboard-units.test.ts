import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IllegalTransitionError } from '@demiurge/lifecycle';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HttpAddressError, parseHttpAddress } from './address.js';
import { DashboardHttpError, errorAnswer } from './http-errors.js';
import { tokenMatches, writeDashboardToken } from './token.js';

describe('parseHttpAddress', () => {
  it('reads HOST:PORT, an IPv6 host in brackets, and port 0', () => {
    expect(parseHttpAddress('127.0.0.1:7780')).toEqual({ host: '127.0.0.1', port: 7780 });
    expect(parseHttpAddress('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(parseHttpAddress('localhost:8080')).toEqual({ host: 'localhost', port: 8080 });
  });

  it('refuses what is not HOST:PORT, naming the input', () => {
    for (const bad of ['7780', '127.0.0.1', ':7780', '127.0.0.1:99999', 'a:b']) {
      expect(() => parseHttpAddress(bad)).toThrow(HttpAddressError);
      expect(() => parseHttpAddress(bad)).toThrow(`"${bad}" is not HOST:PORT`);
    }
  });
});

describe('the dashboard token', () => {
  it('is written 0600 and compared exactly', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dashboard-token-'));
    try {
      const path = join(dir, 'runtime', 'http.token');
      const token = writeDashboardToken(path);
      expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(writeDashboardToken(path)).not.toBe(token);
      expect(tokenMatches(token, token)).toBe(true);
      expect(tokenMatches(token, `${token}x`)).toBe(false);
      expect(tokenMatches(token, undefined)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('errorAnswer', () => {
  it('keeps the status and code of expected refusals and never a stack', () => {
    expect(errorAnswer(new DashboardHttpError(403, 'cross_site', 'no'))).toEqual({
      status: 403,
      body: { error: { code: 'cross_site', message: 'no' } },
    });
    const zod = z.object({ id: z.string() }).safeParse({ id: 1 });
    expect(errorAnswer(zod.error)).toMatchObject({ status: 400, body: { error: { code: 'bad_request' } } });
    const illegal = new IllegalTransitionError('task', 'tsk_1', 'completed', 'task.cancelled', ['task.archived']);
    expect(errorAnswer(illegal)).toMatchObject({ status: 409, body: { error: { code: 'illegal_transition' } } });
    const crash = errorAnswer(new TypeError('x is undefined'));
    expect(crash).toEqual({
      status: 500,
      body: { error: { code: 'internal', message: 'the host failed to answer: TypeError: x is undefined' } },
    });
  });
});
