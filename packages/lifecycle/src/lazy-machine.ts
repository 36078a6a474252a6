import { type AnyStateMachine, setup } from 'xstate';

/**
 * Machines built on first use. Building an XState machine (`createMachine`: its state nodes, every
 * transition formatted) is most of what importing this package costs, and a command that never asks a
 * machine anything (`demiurge status`) should not pay for twelve of them (docs/performance.md, start-up).
 *
 * A lazy machine is a stand-in that builds the real machine the first time anything is read from it and
 * forwards every read to it, so `taskMachine.root`, `createActor(taskMachine)` and xstate's graph helpers work
 * as on the machine itself. The lifecycles hold the real machine (`lifecycle.machine`), built once.
 */
const builders = new WeakMap<object, () => AnyStateMachine>();

/**
 * A stand-in for the machine `build` returns, built on first use, once.
 * @example
 * const lamp = lazyMachine(() => setup({}).createMachine({ id: 'lamp', initial: 'none', states: { none: {} } }));
 * lamp.root.key; // 'lamp' (built here)
 */
export function lazyMachine<M extends AnyStateMachine>(build: () => M): M {
  let machine: M | undefined;
  const real = (): M => {
    machine ??= build();
    return machine;
  };
  const proxy = new Proxy(Object.create(null) as object, {
    get: (_target, key) => Reflect.get(real(), key),
    set: (_target, key, value) => Reflect.set(real(), key, value),
    has: (_target, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(real(), key);
      return descriptor && { ...descriptor, configurable: true };
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
  builders.set(proxy, real);
  return proxy as M;
}

/** Whether `machine` is a stand-in of {@link lazyMachine} whose real machine may not be built yet. */
export function isLazyMachine(machine: object): boolean {
  return builders.has(machine);
}

/** The real machine behind a lazy stand-in (built now if it was not), or the machine itself. */
export function realMachine<M extends AnyStateMachine>(machine: M): M {
  const real = builders.get(machine);
  return real ? (real() as M) : machine;
}

/**
 * XState's `setup`, whose `createMachine` returns a {@link lazyMachine}: the machine files declare their
 * machines exactly as with `setup`, and each is built the first time it is used.
 * @example
 * export const lampMachine = lazySetup({ types: { events: {} as LampEvent } }).createMachine({ ... });
 */
export const lazySetup = ((parameters: Parameters<typeof setup>[0]) => {
  const base = setup(parameters);
  return {
    ...base,
    createMachine: (config: Parameters<typeof base.createMachine>[0]) =>
      lazyMachine(() => base.createMachine(config) as AnyStateMachine),
  };
}) as unknown as typeof setup;
