import { awaitsScan, InstanceStates, isInstanceBlocked, type EventStore, type Logger } from '@wagw/lib';

/** What the sessions side needs to know of an instance from its events. */
export interface InstanceFacts {
  /** The owner (empty until InstanceCreated is applied). */
  account: string;
  linkedNumber: string | null;
  /** Why sends must fail now (logged out, failed), or null. */
  blockedReason: string | null;
  /** Sequence of the last reset: sends accepted before it are dropped. */
  resetSequence: number;
  /** When the instance's content was last erased (ms since the epoch), or null: sends accepted until then cannot go out. */
  dataErasedAt: number | null;
}

/** Every instance's link facts, as the instance aggregate's state has them. */
export class InstanceRegistry extends InstanceStates {
  private readonly resetListeners = new Set<(instanceId: string, at: number) => void>();
  private readonly erasureListeners = new Set<(instanceId: string, at: number) => void>();

  constructor(store: EventStore, logger: Logger) {
    super(store, logger);
    this.onChange(({ instanceId, before, after, at }) => {
      if (before.exists && after.resets !== before.resets) for (const listener of this.resetListeners) listener(instanceId, Date.parse(at));
      if (after.exists && after.dataErasedAt && after.dataErasedAt !== (before.exists ? before.dataErasedAt : null))
        for (const listener of this.erasureListeners) listener(instanceId, Date.parse(after.dataErasedAt));
    });
  }

  get(instanceId: string): InstanceFacts | undefined {
    const state = this.stateOf(instanceId);
    if (!state) return undefined;
    return {
      account: state.account,
      linkedNumber: state.linkedNumber,
      blockedReason: isInstanceBlocked(state) ? state.lastDisconnectReason : null,
      resetSequence: this.resetSequenceOf(instanceId),
      dataErasedAt: state.dataErasedAt ? Date.parse(state.dataErasedAt) : null,
    };
  }

  /** Instances linked to a number and not logged out, failed or reset: the ones that should be connected. */
  linkedInstances(): string[] {
    const ids: string[] = [];
    for (const state of this.all()) if (state.linkedNumber && !isInstanceBlocked(state)) ids.push(state.instanceId);
    return ids;
  }

  /** Instances not linked whose last state is a QR code shown or a connection starting (`awaitsScan`). */
  awaitingScan(): string[] {
    const ids: string[] = [];
    for (const state of this.all()) if (awaitsScan(state)) ids.push(state.instanceId);
    return ids;
  }

  isLinked(instanceId: string): boolean {
    const state = this.stateOf(instanceId);
    return Boolean(state?.linkedNumber && !isInstanceBlocked(state));
  }

  /**
   * Called for every erasure applied after the listener was added, with its time (the connector drops the content it
   * kept from before it). Erasures replayed at start-up are called too: one made while no replica ran still happens.
   */
  onErased(listener: (instanceId: string, at: number) => void): void {
    this.erasureListeners.add(listener);
  }

  /** Called for every reset applied after the listener was added, with its time (start-up replays included). */
  onReset(listener: (instanceId: string, at: number) => void): void {
    this.resetListeners.add(listener);
  }
}
