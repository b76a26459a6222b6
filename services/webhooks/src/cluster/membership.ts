import { SUBJECTS } from '@wagw/lib';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from '@wagw/lib';

/** Core NATS subjects of the webhooks cluster (outside `webhooks.>`, which the WEBHOOKS stream stores). */

type MemberState = 'up' | 'draining' | 'left';

interface Heartbeat {
  id: string;
  state: MemberState;
}

export interface MembershipOptions {
  /** How often each replica announces itself; one missing for 3.5 intervals is gone. */
  heartbeatMs: number;
}

/**
 * Which webhooks replicas are alive: each announces itself on a core NATS subject every `heartbeatMs`. A replica
 * is `draining` while it shuts down (it finishes its work but takes no new instances) and gone once it says it
 * left or stops announcing itself. Member ids carry an incarnation suffix, so a restarted process is a new member.
 */
export class Membership {
  private readonly seen = new Map<string, { state: MemberState; at: number }>();
  private readonly goneListeners = new Set<(member: string) => void>();
  private subscription: Subscription | null = null;
  private timer: NodeJS.Timeout | null = null;
  private state: MemberState = 'up';

  constructor(
    private readonly nc: NatsConnection,
    readonly self: string,
    private readonly options: MembershipOptions,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.subscription = this.nc.subscribe(SUBJECTS.webhooksMembers, {
      callback: (error, msg) => {
        if (error) return;
        try {
          this.observe(msg.json<Heartbeat>());
        } catch {
          // Not a heartbeat: ignored.
        }
      },
    });
    this.announce();
    let lastTick = performance.now();
    this.timer = setInterval(() => {
      // After a stall of this process (GC, CPU starvation) the others' heartbeats are still unread: judge next time.
      const now = performance.now();
      const late = now - lastTick > this.options.heartbeatMs * 2;
      lastTick = now;
      this.announce();
      if (!late) this.expire();
    }, this.options.heartbeatMs);
    this.timer.unref();
  }

  /** Replicas that may take new instances (alive and not draining), this one included while it is up. */
  usable(): string[] {
    const members = this.state === 'up' ? [this.self] : [];
    for (const [id, member] of this.seen) if (member.state === 'up' && id !== this.self) members.push(id);
    return members;
  }

  /** Replicas alive (draining included), this one included. */
  aliveCount(): number {
    let count = 1;
    for (const id of this.seen.keys()) if (id !== this.self) count++;
    return count;
  }

  /** Called when a replica left or stopped announcing itself: whatever it held will not be finished by it. */
  onGone(listener: (member: string) => void): void {
    this.goneListeners.add(listener);
  }

  /** Takes a replica found unreachable for gone at once, without waiting for its heartbeats to stop. */
  unreachable(member: string): void {
    this.forget(member, 'unreachable');
  }

  /** Announces that this replica finishes its work but takes no new instances. */
  drain(): void {
    this.state = 'draining';
    this.announce();
  }

  /** Announces that this replica left, and stops. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.state = 'left';
    this.announce();
    this.subscription?.unsubscribe();
  }

  private announce(): void {
    if (this.nc.isClosed()) return;
    this.nc.publish(SUBJECTS.webhooksMembers, JSON.stringify({ id: this.self, state: this.state } satisfies Heartbeat));
  }

  private observe(heartbeat: Heartbeat): void {
    if (typeof heartbeat.id !== 'string' || heartbeat.id === this.self) return;
    if (heartbeat.state === 'left') return this.forget(heartbeat.id, 'left');
    if (!this.seen.has(heartbeat.id)) this.logger.info({ member: heartbeat.id }, 'webhooks replica joined');
    this.seen.set(heartbeat.id, { state: heartbeat.state === 'draining' ? 'draining' : 'up', at: performance.now() });
  }

  private expire(): void {
    const oldest = performance.now() - this.options.heartbeatMs * 3.5;
    for (const [id, member] of this.seen) if (member.at < oldest) this.forget(id, 'stopped announcing itself');
  }

  private forget(id: string, why: string): void {
    if (!this.seen.delete(id)) return;
    this.logger.info({ member: id, why }, 'webhooks replica gone');
    for (const listener of this.goneListeners) listener(id);
  }
}
