import { Objm, setSha256Backend, type ObjectStore } from '@nats-io/obj';
import type { NatsHandle } from './connection';
import { untilJetStreamAnswers } from './startupRetry';
import { OBJECT_STORES } from './topology';

/** A read model's state at a position of the event log, serialized by the model. */
export interface Checkpoint {
  /** Which read model (its object's name). */
  model: string;
  /** The model's version: a checkpoint of another version is not restored (its evolve may have changed). */
  modelVersion: number;
  /** The sequence of the last commit folded into it. */
  position: number;
  /** The command id of that commit: tells a checkpoint of this log from one of a log created anew. */
  commandId: string;
  body: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// The object store digests every object it puts and gets (SHA-256), by default in JavaScript (js-sha256). node:crypto
// does it ~25x faster: a send ledger of 200,000 queued sends (18 MB) took 296 ms in js-sha256 and 11.5 ms native, and
// its checkpoint's put went from ~600 to ~300 ms (CPU ~560 to ~280 ms), its load from ~400 to ~110 ms. The switch
// is process-wide; this module is its only user of object stores.
setSha256Backend('native');

/**
 * Read-model checkpoints in a NATS object store: a model of many instances outgrows a message (1 MiB), and the object
 * store chunks it, keeps it on `NATS_REPLICAS` servers and replaces it atomically (a reader sees the old or the new
 * one). The position and the model version travel as the object's metadata, so a writer can tell whether the stored
 * checkpoint is newer than its own without downloading it.
 */
export class CheckpointStore {
  private constructor(private readonly store: ObjectStore) {}

  static async open(nats: NatsHandle): Promise<CheckpointStore> {
    const store = await untilJetStreamAnswers(
      nats.logger,
      `object store ${OBJECT_STORES.checkpoints}`,
      () => new Objm(nats.nc).create(OBJECT_STORES.checkpoints, { replicas: nats.replicas }),
      nats.giveUpAfterMs,
    );
    return new CheckpointStore(store);
  }

  async load(model: string): Promise<Checkpoint | null> {
    const info = await this.store.info(model);
    if (!info || info.deleted) return null;
    const blob = await this.store.getBlob(model);
    if (!blob) return null;
    const meta = info.metadata ?? {};
    return {
      model,
      modelVersion: Number(meta.model_version),
      position: Number(meta.position),
      commandId: meta.command_id ?? '',
      body: decoder.decode(blob),
    };
  }

  /** Stores the checkpoint unless one at the same or a later position of this model version is there already. */
  async save(checkpoint: Checkpoint): Promise<boolean> {
    const stored = await this.store.info(checkpoint.model);
    const meta = stored && !stored.deleted ? (stored.metadata ?? {}) : null;
    if (meta && Number(meta.model_version) === checkpoint.modelVersion && Number(meta.position) >= checkpoint.position) return false;
    await this.replace(checkpoint);
    return true;
  }

  /** Deletes the model's checkpoint: the next start folds the whole log. */
  async remove(model: string): Promise<void> {
    if (await this.store.info(model)) await this.store.delete(model);
  }

  /** Stores the checkpoint whatever is stored (a repair by `npm run rebuild -- <model> --write`). */
  async replace(checkpoint: Checkpoint): Promise<void> {
    await this.store.putBlob(
      {
        name: checkpoint.model,
        metadata: { model_version: String(checkpoint.modelVersion), position: String(checkpoint.position), command_id: checkpoint.commandId },
      },
      encoder.encode(checkpoint.body),
    );
  }
}
