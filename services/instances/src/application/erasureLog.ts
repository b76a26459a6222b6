import { instanceHistoryPattern, instanceStream, type EventStore } from '@wagw/lib';

export interface ErasuresSoFar {
  /** An InstanceDataErased was recorded under this command id (the erasure a retry repeats). */
  recorded: boolean;
  /** The sequence of the latest InstanceDataErased, 0 = none. */
  lastSequence: number;
}

/**
 * The instance's recorded erasures, from its own stream: whether `commandId` recorded one, and where the latest is.
 * Read from the log rather than trusted to the store's duplicate window, which would let a retry older than it
 * destroy again; the instance stream holds the instance's own events only (not its messages), so it is short.
 */
export const erasuresSoFar = async (store: EventStore, instanceId: string, commandId: string): Promise<ErasuresSoFar> => {
  let recorded = false;
  let lastSequence = 0;
  for (const commit of await store.readStream(instanceStream(instanceId))) {
    if (!commit.events.some((e) => e.type === 'InstanceDataErased')) continue;
    lastSequence = commit.sequence;
    if (commandId !== '' && commit.commandId === commandId) recorded = true;
  }
  return { recorded, lastSequence };
};

/**
 * Whether the history after `sequence` (the latest recorded erasure) holds content that reads as erased: a key made
 * after that erasure was destroyed since, with no InstanceDataErased to show for it (an erasure that stopped between
 * the two, e.g. a crash). Asked only when an erasure found no key left to destroy; it stops at the first such event.
 */
export const erasedSince = async (store: EventStore, instanceId: string, sequence: number): Promise<boolean> => {
  for await (const commit of store.scanPattern(instanceHistoryPattern(instanceId), sequence + 1)) {
    if (commit.events.some((e) => e.data.erased === true)) return true;
  }
  return false;
};
