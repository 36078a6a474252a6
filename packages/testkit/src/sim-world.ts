import { DeliveryAdapterError, type OperatorSink, type OutboundDelivery } from '@demiurge/delivery';
import { type CompletionChunk, type CompletionRequest, type ModelProvider, ProviderError } from '@demiurge/providers';
import { defineTool, type ToolDefinition } from '@demiurge/turn-engine';
import type { RunningTask, TaskHandler, TaskOutcome } from '@demiurge/workers';
import { z } from 'zod';
import type { ProviderFault, SinkFault, ToolFault } from './scenario.js';
import type { VirtualTimers } from './sim-clock.js';

/** The timeout of a `slow` simulated process (`timeoutSeconds` of its task), in virtual seconds. */
export const SLOW_TIMEOUT_S = 600;

/** The plan of one simulated turn, carried in its input text so a resumed turn (in a new host) finds it again. */
export interface TurnPlan {
  readonly n: number;
  readonly tools: readonly ToolFault[];
  readonly provider: ProviderFault;
}

const PLAN_PREFIX = 'sim turn ';

/** The input text of a simulated turn: readable, and parsed back by the simulated provider. */
export function planText(plan: TurnPlan): string {
  return `${PLAN_PREFIX}${JSON.stringify(plan)}`;
}

function planOf(request: CompletionRequest): TurnPlan | undefined {
  const first = request.messages.find((m) => m.role === 'user')?.content ?? '';
  const at = first.indexOf(PLAN_PREFIX);
  if (at < 0) return undefined;
  try {
    return JSON.parse(first.slice(at + PLAN_PREFIX.length).split('\n')[0] ?? '') as TurnPlan;
  } catch {
    return undefined;
  }
}

/** The simulated tool's name: a non-idempotent external effect, counted by the world. */
export const SIM_TOOL = 'sim_effect';

/**
 * Everything outside the runtime that a scenario touches, with every effect counted: the webhook sink (what
 * arrived, how often), the simulated tool's effects and the simulated processes. Faults are set by the actions.
 * One world lives across the crashes and restarts of a scenario (it is the outside world, not the host).
 */
export class SimWorld {
  /** Delivery id → how many times the sink received it. */
  readonly received = new Map<string, number>();
  /** Tool effect key (turn/call) → how many times it was performed. */
  readonly toolEffects = new Map<string, number>();
  /** Task id → how many times its simulated process was started. */
  readonly processStarts = new Map<string, number>();
  /** How the sink answers the sends of the current dispatch step. */
  sinkFault: SinkFault = 'ok';
  /** Faults already played (a hang or provider error happens once per turn and round, so recovery can finish). */
  private readonly played = new Set<string>();
  /** Abort listeners of calls that hang, so a crash can let them go. */
  private readonly hanging = new Set<() => void>();
  /** Sends acknowledged but not yet handed to the sink (only with the `ackBeforeSend` bug). */
  readonly deferred: OutboundDelivery[] = [];

  /** The timers of processes still running, so a crash lets them go with the host. */
  private readonly processTimers = new Set<() => void>();

  constructor(
    private readonly bug: SimBug | undefined,
    private readonly timers?: VirtualTimers,
  ) {}

  /** Played once: true the first time this key is seen. */
  once(key: string): boolean {
    if (this.played.has(key)) return false;
    this.played.add(key);
    return true;
  }

  /** A call that answers only when its signal aborts (a cancel, a lost lease) or the host crashes. */
  hang(signal: AbortSignal | undefined, what: string): Promise<never> {
    return new Promise((_, reject) => {
      const release = () => {
        this.hanging.delete(release);
        reject(new Error(`${what}: the simulated call was abandoned`));
      };
      this.hanging.add(release);
      signal?.addEventListener('abort', release, { once: true });
    });
  }

  /** Lets every hanging call go (the host that made them crashed). */
  releaseHangs(): void {
    for (const release of [...this.hanging]) release();
    for (const cancel of this.processTimers) cancel();
    this.processTimers.clear();
  }

  private count(map: Map<string, number>, key: string): void {
    map.set(key, (map.get(key) ?? 0) + 1);
  }

  /** The simulated webhook sink, attached as the operator channel's sink. */
  readonly sink: OperatorSink = async (delivery) => {
    const fault = this.sinkFault;
    const error = (code: string, detail: string, unknownOutcome: boolean) =>
      new DeliveryAdapterError({ code, channel: 'operator', detail, retryable: !unknownOutcome, unknownOutcome });
    if (fault === 'fail') throw error('http_503', 'the simulated sink refused (HTTP 503)', false);
    if (fault === 'timeout') throw error('timeout', 'the simulated sink did not answer', true);
    if (this.bug === 'ackBeforeSend') {
      // The injected bug: say "sent" now and hand it over later (a crash in between loses it).
      this.deferred.push(delivery);
      return { externalRef: `sim:${delivery.deliveryId}` };
    }
    this.count(this.received, delivery.deliveryId);
    if (this.bug === 'doubleSend') this.count(this.received, delivery.deliveryId);
    if (fault === 'ambiguous') throw error('reset', 'the connection was reset after the request was sent', true);
    return { externalRef: `sim:${delivery.deliveryId}` };
  };

  /** Hands deferred sends over (the buggy sink's "later"); a crash drops them. */
  flushDeferred(): void {
    for (const d of this.deferred.splice(0)) this.count(this.received, d.deliveryId);
  }

  /** The simulated model: plays each turn's plan (tool calls with their faults, then an answer). */
  provider(): ModelProvider {
    const world = this;
    return {
      name: 'sim',
      model: 'sim-1',
      contextWindow: 1_000_000,
      async *complete(request: CompletionRequest): AsyncGenerator<CompletionChunk> {
        const plan = planOf(request);
        const round = request.messages.filter((m) => m.role === 'assistant').length;
        if (plan?.provider && plan.provider.atStep === round && world.once(`provider/${plan.n}/${round}`)) {
          if (plan.provider.kind === 'hang') await world.hang(request.signal, `model round ${round}`);
          throw new ProviderError({
            code: 'provider_http',
            provider: 'sim',
            detail: 'HTTP 500 (simulated)',
            retryable: false,
            status: 500,
          });
        }
        const fault = plan?.tools[round];
        if (plan && fault !== undefined) {
          const call = { id: `call_${round}_0`, name: SIM_TOOL, arguments: { fault } };
          yield { type: 'tool_call', call };
          yield { type: 'done', usage: { inputTokens: 10, outputTokens: 5 }, finishReason: 'tool_calls' };
          return;
        }
        yield { type: 'text', text: plan ? `done ${plan.n}` : 'ok' };
        yield { type: 'done', usage: { inputTokens: 10, outputTokens: 2 }, finishReason: 'stop' };
      },
    };
  }

  /** The simulated tool: a non-idempotent external effect, performed (counted) before its fault plays. */
  tool(): ToolDefinition {
    return defineTool({
      name: SIM_TOOL,
      description: 'A simulated external side effect.',
      input: z.object({ fault: z.enum(['ok', 'fail', 'hang']) }),
      effect: 'external',
      idempotent: false,
      run: async (input, ctx) => {
        this.count(this.toolEffects, `${ctx.turnId}/${ctx.toolCallId}`);
        if (input.fault === 'fail') throw new Error('the simulated effect failed');
        if (input.fault === 'hang' && this.once(`tool/${ctx.turnId}/${ctx.toolCallId}`)) {
          await this.hang(ctx.signal, 'the simulated tool');
        }
        return { output: 'effect done' };
      },
    });
  }

  /**
   * Simulated processes for `terminal.exec`: the command says how it ends (`ok`, `fail`, `crash`: killed by a
   * signal, `hang`, `slow`: hangs until its `timeoutSeconds` run out on the virtual clock, then it is stopped
   * and fails `timed_out`, as the real handler does).
   */
  processHandler(): TaskHandler {
    return {
      prepare: () => ({}),
      start: async (ctx) => {
        this.count(this.processStarts, ctx.task.taskId);
        const command = (ctx.task.input as { command?: string } | undefined)?.command ?? 'ok';
        let stop!: (outcome: TaskOutcome) => void;
        const finished = new Promise<TaskOutcome>((resolve) => {
          stop = resolve;
        });
        if (command === 'ok') stop({ status: 'completed', exitCode: 0, summary: 'simulated process exited 0' });
        if (command === 'fail') {
          stop({ status: 'failed', exitCode: 1, error: { code: 'exit_code', message: 'simulated process exited 1' } });
        }
        if (command === 'crash') {
          stop({
            status: 'failed',
            error: { code: 'killed_by_signal', message: 'the simulated process ended by SIGKILL' },
          });
        }
        const timeoutSeconds = (ctx.task.input as { timeoutSeconds?: number } | undefined)?.timeoutSeconds;
        if (command === 'slow' && timeoutSeconds !== undefined && this.timers) {
          const cancel = this.timers.after(timeoutSeconds * 1000, () => {
            this.processTimers.delete(cancel);
            stop({ status: 'failed', error: { code: 'timed_out', message: `ran longer than ${timeoutSeconds} s` } });
          });
          this.processTimers.add(cancel);
          void finished.then(() => {
            cancel();
            this.processTimers.delete(cancel);
          });
        }
        const running: RunningTask = {
          finished,
          stop: async (reason) => {
            stop({ status: 'cancelled', reason });
            return finished;
          },
        };
        return running;
      },
      recover: async () => 'the simulated process died with its host',
    };
  }
}

/** A deliberately injected bug, to prove the simulator catches it (never use outside tests). */
export type SimBug = 'ackBeforeSend' | 'doubleSend';
