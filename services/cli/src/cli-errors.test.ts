import { NotFoundError } from '@demiurge/control-plane';
import { StreamVersionConflictError } from '@demiurge/event-store';
import { StoreUnavailableError } from '@demiurge/event-store-postgres';
import { ConfigError, CoreLoadError, FakeScriptError } from '@demiurge/host';
import { GatewayAlreadyRunningError, OperatorRequestError } from '@demiurge/operator';
import { describe, expect, it } from 'vitest';
import { describeError, ExitCode, exitCodeOf } from './cli-errors.js';

const withCode = (message: string, code: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(message), { code, ...extra });

describe('describeError / exitCodeOf', () => {
  it('a broken Agent Core is a configuration error (exit 2), like a bad config.yaml', () => {
    const core = new CoreLoadError('/core/pipelines.yaml', 'invalid YAML: Map keys must be unique', 13);
    expect(exitCodeOf(core)).toBe(ExitCode.usage);
    expect(describeError(core)).toBe('/core/pipelines.yaml:13: invalid YAML: Map keys must be unique');
    expect(exitCodeOf(new ConfigError('config.yaml', 'provider', 'unknown key'))).toBe(ExitCode.usage);
    expect(exitCodeOf(new NotFoundError('run', 'run_x'))).toBe(ExitCode.failure);
  });

  it('a fake provider script that does not load is a configuration error (exit 2)', () => {
    const script = new FakeScriptError('/home/s.yaml', [0, 'content'], 'expected string', 1);
    expect(exitCodeOf(script)).toBe(ExitCode.usage);
    expect(describeError(script)).toBe('invalid fake script /home/s.yaml at [0].content (line 1): expected string');
  });

  it('a PostgreSQL that cannot be used is its one line and exit 1', () => {
    const err = new StoreUnavailableError('postgres://demiurge@db:5432/demiurge', 'connection refused');
    expect(describeError(err)).toBe(
      'cannot open the event store at postgres://demiurge@db:5432/demiurge: connection refused',
    );
    expect(exitCodeOf(err)).toBe(ExitCode.failure);
  });

  it('expected refusals are said plainly, never "unexpected error"', () => {
    const cases: [unknown, RegExp][] = [
      [withCode('database or disk is full', 'SQLITE_FULL'), /^the disk is full: database or disk is full/],
      [
        withCode('no space left on device', 'ENOSPC', { path: '/h/runtime/x' }),
        /^the disk is full \(\/h\/runtime\/x\)/,
      ],
      [withCode('database disk image is malformed', 'SQLITE_CORRUPT'), /^damaged store: .*demiurge doctor/],
      [withCode('file is not a database', 'SQLITE_NOTADB'), /^damaged store: /],
      [withCode('disk I/O error', 'SQLITE_IOERR_SHORT_READ'), /^the store could not be read or written/],
      [withCode('connect ECONNREFUSED /h/runtime/operator.sock', 'ECONNREFUSED'), /^the operator socket/],
      [withCode('permission denied', 'EACCES', { path: '/h' }), /^permission denied \(\/h\)/],
      [new GatewayAlreadyRunningError('/h/runtime/operator.sock'), /^another operator gateway is listening/],
      [new OperatorRequestError('operator.reply_approval', 'not_found', 'no approval apr_1'), /^no approval apr_1$/],
    ];
    for (const [err, expected] of cases) {
      expect(describeError(err)).toMatch(expected);
      expect(exitCodeOf(err)).toBe(ExitCode.failure);
    }
    expect(describeError(new StreamVersionConflictError('ses_1', 3, 4))).toMatch(
      /^other processes kept writing to ses_1 .*run it again$/,
    );
    expect(describeError(new TypeError('x is undefined'))).toBe('unexpected error: x is undefined');
  });
});
