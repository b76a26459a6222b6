import type { Logger } from '../log';
import type { Checkpoint, CheckpointStore } from '../nats';
import { Checkpointer, usableCheckpoint } from './checkpointer';
import type { Commit, EventStore } from './port';
import { Projection } from './projection';

/** A read model that can be folded from commits and kept in checkpoints. */
export interface FoldedModel {
  /** The checkpoint's name. */
  readonly model: string;
  /** Raised whenever what the fold builds changes meaning: a checkpoint of another version is folded anew. */
  readonly modelVersion: number;
  /** The streams it folds. */
  readonly pattern: string;
  /** false: the fold reads no content fields, and gets them null (no decryption per event). */
  readonly readsContent?: boolean;
  apply(commit: Commit): void;
  /** The model's entries, serialized deterministically (equal models give equal text). */
  serialize(): string;
  /** Takes a checkpoint's entries (before the projection starts after its position); all or nothing: a body it cannot read throws and leaves the model as it was. */
  restore(body: string): void;
}

/**
 * Keeps a read model up to date from the log (a `Projection`) and in checkpoints: it starts from the stored
 * checkpoint when it fits (this log, this model version), else from the log's beginning, catches up from there, and
 * writes a checkpoint every `everyMs` while the log moves and a last one at `stop`.
 */
export class CheckpointedProjection {
  private readonly projection: Projection;
  /** The command id of the last commit folded: names the position in a checkpoint. */
  private lastCommandId = '';
  private folded = 0;
  private checkpointer: Checkpointer | null = null;

  constructor(
    private readonly store: EventStore,
    private readonly model: FoldedModel,
    private readonly logger: Logger,
  ) {
    this.projection = new Projection(store, model.pattern, (commit) => this.fold(commit), logger, model.readsContent ?? true);
  }

  /** The sequence of the last commit folded. */
  get position(): number {
    return this.folded;
  }

  /** Folds one commit (the projection's step; a rebuild that reads pages itself calls it too). */
  fold(commit: Commit): void {
    this.lastCommandId = commit.commandId;
    this.folded = commit.sequence;
    this.model.apply(commit);
  }

  snapshot(): Checkpoint {
    const { model, modelVersion } = this.model;
    return { model, modelVersion, position: this.folded, commandId: this.lastCommandId, body: this.model.serialize() };
  }

  restore(checkpoint: Checkpoint): void {
    this.model.restore(checkpoint.body);
    this.lastCommandId = checkpoint.commandId;
    this.folded = checkpoint.position;
  }

  /** Starts folding after `position` (a restored checkpoint's) or from the beginning of the log, without checkpoints. */
  start(position = 0): void {
    this.projection.start(position);
  }

  /** Starts from the stored checkpoint when it is usable (else from the beginning) and keeps writing them. Answers where it started. */
  async startFromCheckpoint(checkpoints: CheckpointStore, everyMs: number): Promise<number> {
    const { model, modelVersion, pattern } = this.model;
    const checkpoint = await checkpoints.load(model).catch((error: unknown) => {
      this.logger.warn({ err: error, model }, 'reading the checkpoint failed; folding the log from its beginning');
      return null;
    });
    const usable = checkpoint !== null && (await usableCheckpoint(checkpoint, modelVersion, this.store, pattern));
    if (checkpoint && !usable) {
      this.logger.warn(
        { model, position: checkpoint.position, modelVersion: checkpoint.modelVersion },
        'the checkpoint does not fit this log or version; folding from the beginning',
      );
    }
    const restored = usable && this.restoredFrom(checkpoint);
    const from = restored ? checkpoint.position : 0;
    this.start(from);
    this.checkpointer = new Checkpointer(this, checkpoints, this.logger, everyMs, from);
    this.checkpointer.start();
    return from;
  }

  /**
   * Restores a checkpoint that fits; one whose body does not restore (written by a bug, or by a release that used the
   * same version for another layout) is folded past, not a start-up that fails every time.
   */
  private restoredFrom(checkpoint: Checkpoint): boolean {
    try {
      this.restore(checkpoint);
      return true;
    } catch (error) {
      this.logger.warn(
        { err: error, model: checkpoint.model, position: checkpoint.position },
        'the checkpoint does not restore; folding the log from its beginning',
      );
      return false;
    }
  }

  /** Stops folding; with checkpoints, writes the last one. */
  async stop(): Promise<void> {
    await this.projection.stop();
    await this.checkpointer?.stop();
  }

  catchUp(timeoutMs: number): Promise<boolean> {
    return this.projection.catchUp(timeoutMs);
  }

  reachStream(stream: string, timeoutMs: number, upTo?: number): Promise<boolean> {
    return this.projection.reachStream(stream, timeoutMs, upTo);
  }
}
