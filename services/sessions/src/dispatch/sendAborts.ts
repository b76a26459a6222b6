/** One send being worked in a lane here: what stops its waits and its media fetch, and whether it may still go out. */
interface Worked {
  controller: AbortController;
  /** Why the send can no longer go out (a reset, a logout, an erasure), or null. */
  failure: () => string | null;
}

/**
 * The sends being worked in this replica's lanes, by instance, each with an AbortSignal its pacing gap, typing and
 * media fetch listen to. When the instance's facts change (`check`), a send that can no longer go out is aborted: a
 * reset, logout or erasure once left its media fetch running to the media time-out (20 s), the instance's other sends
 * waiting behind it in the lane, unfailed, and a new link's first sends too. A disconnection aborts nothing: the send
 * stays queued and goes out once connected again, as before.
 */
export class SendAborts {
  private readonly byInstance = new Map<string, Map<string, Worked>>();

  /** The send is being worked from now until `end`; the signal aborts once it can no longer go out. */
  begin(instanceId: string, stream: string, failure: () => string | null): AbortSignal {
    const controller = new AbortController();
    let worked = this.byInstance.get(instanceId);
    if (!worked) this.byInstance.set(instanceId, (worked = new Map<string, Worked>()));
    worked.set(stream, { controller, failure });
    return controller.signal;
  }

  end(instanceId: string, stream: string): void {
    const worked = this.byInstance.get(instanceId);
    worked?.delete(stream);
    if (worked?.size === 0) this.byInstance.delete(instanceId);
  }

  /** The instance's facts changed: its sends being worked that can no longer go out are aborted. */
  check(instanceId: string): void {
    const worked = this.byInstance.get(instanceId);
    if (!worked) return;
    for (const { controller, failure } of worked.values()) if (!controller.signal.aborted && failure() !== null) controller.abort();
  }
}
