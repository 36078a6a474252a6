import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_FUZZ_SEED, fuzzSettings } from './fuzz-settings.js';

afterEach(() => vi.unstubAllEnvs());

describe('fuzzSettings', () => {
  it('uses the fixed seed and the given runs, and prints them', () => {
    vi.stubEnv('FUZZ_SEED', undefined);
    vi.stubEnv('FUZZ_RUNS', undefined);
    vi.stubEnv('FUZZ_PATH', undefined);
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    expect(fuzzSettings('config.yaml', 200)).toEqual({ seed: DEFAULT_FUZZ_SEED, numRuns: 200, verbose: 1 });
    expect(info).toHaveBeenCalledWith('fuzz config.yaml: FUZZ_SEED=2121 FUZZ_RUNS=200');
    info.mockRestore();
  });

  it('takes FUZZ_SEED, FUZZ_RUNS and FUZZ_PATH from the environment (a longer run, a replay)', () => {
    vi.stubEnv('FUZZ_SEED', '7');
    vi.stubEnv('FUZZ_RUNS', '5000');
    vi.stubEnv('FUZZ_PATH', '3:1:0');
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    expect(fuzzSettings('frames', 100)).toEqual({ seed: 7, numRuns: 5000, path: '3:1:0', verbose: 1 });
    expect(info).toHaveBeenCalledWith('fuzz frames: FUZZ_SEED=7 FUZZ_RUNS=5000 FUZZ_PATH=3:1:0');
    info.mockRestore();
  });
});
