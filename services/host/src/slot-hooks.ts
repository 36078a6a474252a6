import type { Clock, IdGenerator } from '@demiurge/contracts';
import type { HostWorkLifecycleRuntime } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import { sessionsReader, type TranscriptEntry } from '@demiurge/projector-sessions';
import type { SessionRuntime } from '@demiurge/sessions';
import {
  type AgentCore,
  type BackgroundWorkRuntime,
  createDeliveryIntents,
  createSlotModuleLoader,
  type DeliverFn,
  type DeliveryIntentsOptions,
  type SlotModuleLoad,
  SlotRuntime,
  slotVersions,
} from '@demiurge/slots';
import type { TurnHooks, TurnPin, TurnSelection } from '@demiurge/turn-engine';
import type { CoreSource } from './core-source.js';

export interface SlotHooksOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly core: AgentCore;
  readonly sessions: SessionRuntime;
  readonly host: HostWorkLifecycleRuntime;
  readonly background: BackgroundWorkRuntime;
  readonly workspaceRoot: string;
  readonly onLog?: (line: string) => void;
  /** Where compiled TypeScript slot modules are kept between starts (`<home>/cache/slots`); absent, none. */
  readonly slotCacheDir?: string;
  /** Told how each slot module was imported (from the cache, compiled, or JavaScript) and how long it took. */
  readonly onSlotModule?: (load: SlotModuleLoad) => void;
  /** Where a session's sends go when the host decides it (scheduled fires), see `createDeliveryIntents`. */
  readonly routeOf?: DeliveryIntentsOptions['routeOf'];
  /**
   * The core by revision (the host's {@link CoreSource}): with it, each turn is pinned at admission to the
   * current revision and runs that revision's slots; without it, every turn runs `core`, unversioned.
   */
  readonly source?: Pick<CoreSource, 'current' | 'at' | 'ensureRunnable'>;
  /** The tool names the model may see, recorded in each turn's pin. */
  readonly toolNames?: () => readonly string[];
}

const pick = (
  ids: readonly string[],
  selected: 'all' | readonly string[] | undefined,
  fallback: 'all' | readonly string[],
) => {
  const chosen = selected ?? fallback;
  return chosen === 'all' ? ids : ids.filter((id) => chosen.includes(id));
};

/** The core with only the selected slots, pipeline order and serial/parallel groups kept. */
export function selectCore(core: AgentCore, selection: TurnSelection | null): AgentCore {
  if (!selection) return core;
  const p = core.pipelines;
  return {
    ...core,
    pipelines: {
      bootstrap: { serial: selection.bootstrap ? p.bootstrap.serial : [] },
      input: {
        serial: pick(p.input.serial, selection.inputSlots, ['base_input']),
        parallel: pick(p.input.parallel, selection.inputSlots, ['base_input']),
      },
      output: {
        serial: pick(p.output.serial, selection.outputSlots, ['base_output']),
        parallel: pick(p.output.parallel, selection.outputSlots, ['base_output']),
      },
    },
  };
}

/**
 * The engine's slot hooks over the Agent Core: bootstrap once per session and the input slots before a
 * turn is admitted; the output slots with the answer before the turn completes. A send is recorded at
 * most once per (turn, text): an output phase that runs again after a crash finds its earlier send.
 */
export function createSlotHooks(options: SlotHooksOptions): TurnHooks & {
  /** Imports every slot module of the core now (see {@link SlotRuntime.preload}); failures are returned. */
  preload(): Promise<{ readonly slotId: string; readonly error: unknown }[]>;
} {
  const runtimes = new Map<string, SlotRuntime>();
  // One module cache for every selection's runtime: each slot module is imported once per host.
  const modules = createSlotModuleLoader({
    ...(options.slotCacheDir ? { cacheDir: options.slotCacheDir } : {}),
    ...(options.onSlotModule ? { onLoad: options.onSlotModule } : {}),
  });
  const inner = createDeliveryIntents({
    store: options.store,
    ids: options.ids,
    host: options.host,
    sessions: options.sessions,
    ...(options.routeOf ? { routeOf: options.routeOf } : {}),
  });
  const deliver: DeliverFn = async (intent) => {
    if (intent.turnId) {
      const earlier = await turnMessages(options.store, intent.sessionId, intent.turnId);
      const same = earlier.find((m) => m.role === 'assistant' && m.text === intent.text);
      if (same) return { messageId: same.messageId, deliveryId: 'already-queued' };
    }
    return inner(intent);
  };
  const runtimeFor = (selection: TurnSelection | null, core: AgentCore = options.core) => {
    const key = `${core.dir}\0${JSON.stringify(selection ?? null)}`;
    let runtime = runtimes.get(key);
    if (!runtime) {
      runtime = new SlotRuntime({
        store: options.store,
        clock: options.clock,
        ids: options.ids,
        core: selectCore(core, selection),
        sessions: options.sessions,
        deliver,
        modules,
        background: options.background,
        workspaceRoot: options.workspaceRoot,
        ...(options.onLog
          ? { onLog: (e: { text?: string }) => options.onLog?.(String(e.text ?? JSON.stringify(e))) }
          : {}),
      } as ConstructorParameters<typeof SlotRuntime>[0]);
      runtimes.set(key, runtime);
    }
    return runtime;
  };
  const versions = new WeakMap<AgentCore, ReturnType<typeof slotVersions>>();
  const versionsOf = (core: AgentCore) => {
    const known = versions.get(core);
    if (known) return known;
    const loading = slotVersions(core);
    versions.set(core, loading);
    return loading;
  };
  const pinnedCore = (pin: TurnPin | null): Promise<AgentCore> =>
    options.source ? options.source.at(pin?.revision) : Promise.resolve(options.core);
  return {
    preload: () => runtimeFor(null).preload(),
    async pin(turn) {
      const { core, revision } = options.source ? await options.source.current() : { core: options.core };
      const selected = selectCore(core, turn.selection);
      const p = selected.pipelines;
      const ids = new Set([
        ...p.bootstrap.serial,
        ...p.input.serial,
        ...p.input.parallel,
        ...p.output.serial,
        ...p.output.parallel,
      ]);
      const allowed = turn.selection?.tools;
      const tools = (options.toolNames?.() ?? []).filter((t) => !allowed || allowed.includes(t));
      return {
        coreId: core.id,
        ...(revision ? { revision } : {}),
        slots: (await versionsOf(core)).filter((s) => ids.has(s.id)),
        tools: [...tools],
      };
    },
    async resumable(pin) {
      if (pin && options.source) await options.source.ensureRunnable(pin.coreId, pin.revision);
    },
    async input(turn) {
      const slots = runtimeFor(turn.selection, await pinnedCore(turn.pin));
      if (!turn.selection || turn.selection.bootstrap)
        await slots.runBootstrap({ sessionId: turn.sessionId, turnId: turn.turnId });
      // A session this turn opens has no history yet (it is created in the admission's commit) but its preamble.
      const kept = turn.opening
        ? (turn.preamble ?? [])
        : await options.sessions.history(turn.sessionId, { forModel: true });
      const history = kept.map((m) => ({ role: m.role, text: m.text }));
      const { context } = await slots.runInput({
        sessionId: turn.sessionId,
        turnId: turn.turnId,
        rawText: turn.text,
        history: history as never,
      });
      return context.map((c) => ({ role: c.role, text: c.text, writeHistory: c.writeHistory }));
    },
    async output(turn) {
      const slots = runtimeFor(turn.selection, await pinnedCore(turn.pin));
      const { sends, responseText } = await slots.runOutput({
        sessionId: turn.sessionId,
        turnId: turn.turnId,
        responseText: turn.text,
        signal: turn.signal,
      });
      if (sends.length === 0) return {};
      const messages = await turnMessages(options.store, turn.sessionId, turn.turnId);
      const answer = messages.find((m) => m.role === 'assistant' && (m.text === responseText || m.text === turn.text));
      return answer ? { answerMessageId: answer.messageId } : {};
    },
  };
}

async function turnMessages(store: EventStore, sessionId: string, turnId: string): Promise<TranscriptEntry[]> {
  const all = await sessionsReader(store).transcript(sessionId);
  return all.filter((m) => m.turnId === turnId);
}
