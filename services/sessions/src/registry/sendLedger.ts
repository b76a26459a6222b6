import { ALL_MESSAGES_PATTERN, instanceIdOf, type Commit, type FoldedModel } from '@wagw/lib';

/** A send accepted and neither sent nor failed yet. */
export interface QueuedSend {
  /** The message's stream. */
  stream: string;
  /** Log sequence of its `MessageAccepted`: the order sends go out in. */
  sequence: number;
  /** When it was accepted (ms since the epoch), for the send TTL. */
  acceptedAt: number;
}

/** What the dispatcher reads of the queued sends (the ledger below). */
export interface SendQueue {
  /** How many sends of the instance are queued. */
  queued(instanceId: string): number;
  /** The instance's queued sends, oldest first (a live view: no copy, no sort). */
  queuedSends(instanceId: string): Iterable<QueuedSend>;
  /** Instances with at least one queued send. */
  instancesWithQueued(): string[];
  isQueued(instanceId: string, stream: string): boolean;
  /** Calls `listener` with the instance each time a send of it is queued (a `MessageAccepted` folded in). */
  onQueued(listener: (instanceId: string) => void): void;
}

interface InstanceSends {
  /** In log order (commits are applied in it, and a checkpoint keeps it): the first is the oldest. */
  queued: Map<string, QueuedSend>;
  /** UTC day (YYYY-MM-DD) of `today` and how many sends were accepted on it. */
  day: string;
  today: number;
}

type SerializedSends = { queued: Array<[string, number, number]>; day: string; today: number };

const utcDay = (iso: string): string => iso.slice(0, 10);
const byKey = <T>([a]: [string, ...T[]], [b]: [string, ...T[]]): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A read model of every instance's sends, fed the message streams' commits (a `Projection` of
 * `ALL_MESSAGES_PATTERN`): which wait to go out (accepted, not yet sent or failed) and how many were accepted today
 * (UTC). The quotas read it, and the dispatcher sends from it (see Dispatcher). Every sessions replica keeps one; it lags the store by milliseconds, so
 * sends racing on several replicas may pass a full quota by the ones in flight. It starts from its checkpoint
 * (`CheckpointedProjection`): start-up does not grow with the number of messages in the log, and its memory grows
 * with queued sends (bounded by the queue quota), not with messages.
 */
export class SendLedger implements FoldedModel, SendQueue {
  readonly model = 'send_ledger';
  /** 2: queued sends carry their sequence and acceptance time; 3: they are kept in log order, not by stream. */
  readonly modelVersion = 3;
  readonly pattern = ALL_MESSAGES_PATTERN;
  /** Times and states only: the sends' texts are never opened here. */
  readonly readsContent = false;
  private instances = new Map<string, InstanceSends>();
  private queuedListener: (instanceId: string) => void = () => undefined;

  onQueued(listener: (instanceId: string) => void): void {
    this.queuedListener = listener;
  }

  /** Sends of the instance waiting to go out. */
  queued(instanceId: string): number {
    return this.instances.get(instanceId)?.queued.size ?? 0;
  }

  queuedSends(instanceId: string): Iterable<QueuedSend> {
    return this.instances.get(instanceId)?.queued.values() ?? [];
  }

  instancesWithQueued(): string[] {
    const ids: string[] = [];
    for (const [id, sends] of this.instances) if (sends.queued.size > 0) ids.push(id);
    return ids;
  }

  isQueued(instanceId: string, stream: string): boolean {
    return this.instances.get(instanceId)?.queued.has(stream) ?? false;
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
      sends = { queued: new Map(), day: '', today: 0 };
      this.instances.set(id, sends);
    }
    for (const event of commit.events) {
      if (event.type === 'MessageAccepted') {
        sends.queued.set(commit.stream, { stream: commit.stream, sequence: commit.sequence, acceptedAt: Date.parse(event.occurredAt) });
        const day = utcDay(event.occurredAt);
        if (day === sends.day) sends.today += 1;
        else if (day > sends.day) Object.assign(sends, { day, today: 1 });
        this.queuedListener(id);
      } else if (event.type === 'MessageSent' || event.type === 'MessageFailed') {
        sends.queued.delete(commit.stream);
      }
    }
  }

  /** Instances in id order, their queued sends in log order: equal ledgers serialize alike. */
  serialize(): string {
    const entries = [...this.instances].sort(byKey);
    return JSON.stringify(
      entries.map(([id, sends]): [string, SerializedSends] => [
        id,
        {
          queued: [...sends.queued.values()].map((q): [string, number, number] => [q.stream, q.sequence, q.acceptedAt]),
          day: sends.day,
          today: sends.today,
        },
      ]),
    );
  }

  restore(body: string): void {
    const entries = JSON.parse(body) as Array<[string, SerializedSends]>;
    this.instances = new Map(
      entries.map(([id, sends]) => [
        id,
        {
          day: sends.day,
          today: sends.today,
          queued: new Map(sends.queued.map(([stream, sequence, acceptedAt]) => [stream, { stream, sequence, acceptedAt }])),
        },
      ]),
    );
  }
}
