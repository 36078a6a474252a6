import { InvalidArgumentError, Option } from 'commander';

/** A whole number option parser: `--from must be a whole number >= 1`. */
export function wholeNumber(name: string, min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be a whole number >= ${min}`);
    return n;
  };
}

/** A non-empty text option parser (reasons, notes). */
export function nonEmpty(name: string) {
  return (value: string): string => {
    if (value.trim() === '') throw new InvalidArgumentError(`${name} must not be empty`);
    return value;
  };
}

/** An ISO 8601 time option parser, normalized to `Date#toISOString()`. */
export function isoTime(name: string) {
  return (value: string): string => {
    const ms = Date.parse(value);
    if (Number.isNaN(ms)) throw new InvalidArgumentError(`${name} must be an ISO 8601 time, e.g. 2030-01-01T00:00:00Z`);
    return new Date(ms).toISOString();
  };
}

export const homeOption = () =>
  new Option('--home <dir>', 'the Demiurge home (default: $DEMIURGE_HOME, else ~/.demiurge)');

export const jsonOption = (what = 'print one JSON document instead of text') =>
  new Option('--json', what).default(false);

/** What every command's options carry. */
export interface HomeOptions {
  readonly home?: string;
}

export interface JsonOptions extends HomeOptions {
  readonly json: boolean;
}
