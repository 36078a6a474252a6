import { readFileSync } from 'node:fs';
import type { OperatorClient } from '@demiurge/operator';
import { tempDir } from './cli.js';
import { openGateway } from './gateway.js';
import { type Home, type HomeConfig, writeHome } from './home.js';
import { type HostProcess, startHost } from './host-process.js';
import { LogReader, type LogRow } from './log-reader.js';

const TURN_ENDS = new Set(['turn.completed', 'turn.failed', 'turn.cancelled']);

/** A home with a `demiurge serve` child, its log (read-only) and gateway clients; `dispose` cleans up all. */
export class ServedHome {
  private readonly clients = new Set<OperatorClient>();
  private hostProcess: HostProcess | undefined;

  private constructor(
    readonly home: Home,
    readonly reader: LogReader,
    private readonly removeDir: () => void,
  ) {}

  /** Writes the home and starts its host. */
  static async start(config: HomeConfig, env?: NodeJS.ProcessEnv): Promise<ServedHome> {
    const dir = tempDir('demiurge-unhappy-');
    const home = writeHome(dir.path, config);
    const served = new ServedHome(home, new LogReader(home.db), dir.remove);
    try {
      await served.restart(env);
    } catch (err) {
      await served.dispose();
      throw err;
    }
    return served;
  }

  get host(): HostProcess {
    if (!this.hostProcess) throw new Error('no host is running');
    return this.hostProcess;
  }

  /** Starts the host (again). */
  async restart(env?: NodeJS.ProcessEnv): Promise<HostProcess> {
    this.hostProcess = await startHost(this.home.dir, { cwd: this.home.workspace, ...(env ? { env } : {}) });
    return this.hostProcess;
  }

  /** Stops the host: SIGKILL by default (a crash), SIGTERM for a graceful stop. */
  async stop(signal: NodeJS.Signals = 'SIGKILL') {
    const exit = await this.host.stop(signal);
    this.hostProcess = undefined;
    return exit;
  }

  /** A new gateway client (closed by `dispose`). */
  async gateway(): Promise<OperatorClient> {
    const client = await openGateway(this.host.ready.socket);
    this.clients.add(client);
    return client;
  }

  /** The event that ended the turn (completed, failed or cancelled). */
  turnEnd(turnId: string, timeoutMs = 30_000): Promise<LogRow> {
    return this.reader.waitFor(`the end of turn ${turnId}`, (e) => e.streamId === turnId && TURN_ENDS.has(e.type), {
      timeoutMs,
    });
  }

  /** `tool_call.requested` of the turn's call that matches, once it is recorded. */
  toolCall(turnId: string, match: (data: Record<string, unknown>) => boolean, timeoutMs = 30_000): Promise<LogRow> {
    return this.reader.waitFor(
      `a tool call of turn ${turnId}`,
      (e) => e.type === 'tool_call.requested' && e.data.turnId === turnId && match(e.data),
      { timeoutMs },
    );
  }

  /** The types of a stream's events, in order. */
  types(streamId: string): string[] {
    return this.reader.stream(streamId).map((e) => e.type);
  }

  /** A workspace file's text. */
  workspaceFile(name: string): string {
    return readFileSync(`${this.home.workspace}/${name}`, 'utf8');
  }

  async dispose(): Promise<void> {
    for (const client of this.clients) await client.close().catch(() => undefined);
    await this.hostProcess?.stop('SIGKILL');
    this.reader.close();
    this.removeDir();
  }
}
