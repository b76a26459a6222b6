import { ALL_MESSAGES_PATTERN, instanceIdOf, type Commit, type FoldedModel } from '@wagw/lib';

interface InstanceSends {
  /** Stream names of the messages accepted and neither sent nor failed yet. */
  queued: Set<string>;
  /** UTC day (YYYY-MM-DD) of `today` and how many sends were accepted on it. */
  day: string;
  today: number;
}

const utcDay = (iso: string): string => iso.slice(0, 10);

/**
 * A read model of every instance's sends, fed the message streams' commits (a `Projection` of
 * `ALL_MESSAGES_PATTERN`): how many wait to go out (accepted, not yet sent or failed) and how many were accepted
 * today (UTC), for the send quotas. Every sessions replica keeps one, so any replica can refuse a send; it lags the
 * store by milliseconds, so sends racing on several replicas may pass a full quota by the ones in flight. It starts
 * from its checkpoint (`CheckpointedProjection`): start-up does not grow with the number of messages in the log.
 */
export class SendLedger implements FoldedModel {
  readonly model = 'send_ledger';
  readonly modelVersion = 1;
  readonly pattern = ALL_MESSAGES_PATTERN;
  private instances = new Map<string, InstanceSends>();

  /** Sends of the instance waiting to go out. */
  queued(instanceId: string): number {
    return this.instances.get(instanceId)?.queued.size ?? 0;
  }

  /** Sends of the instance accepted on the UTC day of `now`. */
  acceptedOn(instanceId: string, now: Date): number {
    const sends = this.instances.get(instanceId);
    return sends?.day === utcDay(now.toISOString()) ? sends.today : 0;
  }

  apply(commit: Commit): void {
    const id = instanceIdOf(commit.stream);
    let sends = this.instances.get(id);
    if (!sends) {
      sends = { queued: new Set(), day: '', today: 0 };
      this.instances.set(id, sends);
    }
    for (const event of commit.events) {
      if (event.type === 'MessageAccepted') {
        sends.queued.add(commit.stream);
        const day = utcDay(event.occurredAt);
        if (day === sends.day) sends.today += 1;
        else if (day > sends.day) Object.assign(sends, { day, today: 1 });
      } else if (event.type === 'MessageSent' || event.type === 'MessageFailed') {
        sends.queued.delete(commit.stream);
      }
    }
  }

  /** Instances in id order, their queued streams sorted: equal ledgers serialize alike. */
  serialize(): string {
    const entries = [...this.instances].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return JSON.stringify(entries.map(([id, sends]) => [id, { queued: [...sends.queued].sort(), day: sends.day, today: sends.today }]));
  }

  restore(body: string): void {
    const entries = JSON.parse(body) as Array<[string, { queued: string[]; day: string; today: number }]>;
    this.instances = new Map(entries.map(([id, sends]) => [id, { ...sends, queued: new Set(sends.queued) }]));
  }
}
