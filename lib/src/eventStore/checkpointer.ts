import type { EventStore } from './port';
import type { Logger } from '../log';
import type { Checkpoint, CheckpointStore } from '../nats';

/** A read model that can be checkpointed. */
export interface Checkpointable {
  readonly position: number;
  snapshot(): Checkpoint;
}

/**
 * Whether a stored checkpoint can be restored into a model of `modelVersion` folded from the streams of `pattern`: the same version (the fold it was made
 * by means the same), and its position names a commit of this very log (a log created anew, e.g. a wiped NATS store,
 * has other command ids at those sequences, or none).
 */
export const usableCheckpoint = async (checkpoint: Checkpoint, modelVersion: number, store: EventStore, pattern: string): Promise<boolean> =>
  (await checkpointMisfit(checkpoint, modelVersion, store, pattern)) === null;

/** Why a stored checkpoint cannot be restored (see usableCheckpoint), or null when it can: what `npm run rebuild` says. */
export const checkpointMisfit = async (checkpoint: Checkpoint, modelVersion: number, store: EventStore, pattern: string): Promise<string | null> => {
  if (checkpoint.modelVersion !== modelVersion) return `it was made by model version ${checkpoint.modelVersion}; this release folds version ${modelVersion}`;
  if (!Number.isSafeInteger(checkpoint.position) || checkpoint.position <= 0) return `its position ${checkpoint.position} is no position in a log`;
  // The model's own pattern: its end is one indexed lookup, where the end of '>' on a 1M-event log took 710 ms.
  const { commits } = await store.readPattern(pattern, checkpoint.position, 1);
  const [commit] = commits;
  if (commit?.sequence === checkpoint.position && commit.commandId === checkpoint.commandId) return null;
  return `the log holds another commit at its position ${checkpoint.position}, or none: it was made from another log (a NATS store made anew?)`;
};

/**
 * Writes a model's checkpoint every `everyMs` while its position moves, and a last one when stopped, so a restart
 * catches up only from there. A failed write is logged and tried again at the next tick: checkpoints save start-up
 * time, they never hold a fact the log does not.
 */
export class Checkpointer {
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly model: Checkpointable,
    private readonly checkpoints: CheckpointStore,
    private readonly logger: Logger,
    private readonly everyMs: number,
    private saved: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.save(), this.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.save();
  }

  /** Writes one now if the model moved since the last one (one write at a time). */
  save(): Promise<void> {
    this.writing = this.writing.then(async () => {
      if (this.model.position <= this.saved) return;
      const checkpoint = this.model.snapshot();
      try {
        const started = Date.now();
        await this.checkpoints.save(checkpoint);
        this.saved = checkpoint.position;
        this.logger.debug(
          { model: checkpoint.model, position: checkpoint.position, bytes: checkpoint.body.length, ms: Date.now() - started },
          'checkpoint written',
        );
      } catch (error) {
        this.logger.warn({ err: error, model: checkpoint.model }, 'writing a checkpoint failed; the next tick tries again');
      }
    });
    return this.writing;
  }
}
