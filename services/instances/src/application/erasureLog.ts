import { instanceHistoryPattern, instanceStream, type EventStore } from '@wagw/lib';

export interface ErasuresSoFar {
  /**
   * This command id recorded an erasure (the one a retry repeats): an InstanceDataErased, or an
   * InstanceDataAlreadyErased when it found nothing to erase.
   */
  recorded: boolean;
  /** The sequence of the latest InstanceDataErased, 0 = none. */
  lastSequence: number;
}

/**
 * The instance's recorded erasures, from its own stream: whether `commandId` recorded one (or recorded finding nothing
 * to erase), and where the latest InstanceDataErased is.
 * Read from the log rather than trusted to the store's duplicate window, which would let a retry older than it
 * destroy again; the instance stream holds the instance's own events only (not its messages), so it is short.
 */
export const erasuresSoFar = async (store: EventStore, instanceId: string, commandId: string): Promise<ErasuresSoFar> => {
  let recorded = false;
  let lastSequence = 0;
  for (const commit of await store.readStream(instanceStream(instanceId))) {
    const erased = commit.events.some((e) => e.type === 'InstanceDataErased');
    if (erased) lastSequence = commit.sequence;
    if (commandId === '' || commit.commandId !== commandId) continue;
    if (erased || commit.events.some((e) => e.type === 'InstanceDataAlreadyErased')) recorded = true;
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
