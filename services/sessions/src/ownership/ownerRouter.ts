import {
  fromErrorDetail,
  isAppError,
  LogThrottle,
  SUBJECTS,
  toErrorDetail,
  unavailable,
  type ErrorDetail,
  type Logger,
  type NatsHandle,
  type Ownership,
} from '@wagw/lib';
import type { Subscription } from '@nats-io/transport-node';
import type { GroupInfo, NumberCheck } from '../connector/port';

/** What only the replica holding an instance's lease (the one with its connection) can do. */
export interface OwnerOps {
  getQr(instanceId: string, waitMs: number): Promise<string>;
  getPairingCode(instanceId: string, number: string, waitMs: number): Promise<string>;
  reconnect(instanceId: string): Promise<void>;
  checkNumbers(instanceId: string, numbers: string[]): Promise<NumberCheck[]>;
  listGroups(instanceId: string): Promise<GroupInfo[]>;
  sandboxScan(instanceId: string, number: string): Promise<void>;
  sandboxInbound(instanceId: string, inbound: SandboxInboundCall): Promise<void>;
  /** Sandbox: restrict the instance's account until `untilMs` (null: no known end), or lift (`lift`). */
  sandboxRestrict(instanceId: string, untilMs: number | null, lift: boolean): Promise<void>;
  /** A read receipt for a message the instance received (its connection sends it). */
  markRead(instanceId: string, messageId: string): Promise<void>;
}

/** A simulated contact's message (sandbox): text, media of a kind and size, or both. */
export interface SandboxInboundCall {
  from: string;
  pushName: string;
  text: string;
  media: { kind: string; size: number } | null;
  /** A group message (…@g.us) from `from`; empty: a 1:1 message. */
  groupId: string;
}

type Call = { [K in keyof OwnerOps]: { op: K; instanceId: string; args: Parameters<OwnerOps[K]> } }[keyof OwnerOps];
/** A failure travels as the error model's plain fields (grpc/errors.ts), so a 429's or 503's wait (retryAfterS) survives the hop. */
type Reply = { ok: true; value: unknown } | ({ ok: false } & ErrorDetail);

/** Operations that may take a free instance (start its connection here); the others only reach a live owner. */
const TAKES_FREE: ReadonlySet<keyof OwnerOps> = new Set(['getQr', 'getPairingCode', 'reconnect']);
const ATTEMPTS = 5;

/**
 * Runs each instance operation where the instance's connection lives: here when this replica holds the lease
 * (or takes a free one, for the operations that start a connection), else on the holder, asked over NATS
 * request/reply on its own subject. A stale view (the holder just changed) is retried a few times.
 */
export class OwnerRouter implements OwnerOps {
  private subscription: Subscription | null = null;
  /** One line per 5 s per dead owner, not one per request routed to it. */
  private readonly throttle = new LogThrottle(5_000);

  constructor(
    private readonly nats: NatsHandle,
    private readonly ownership: Ownership,
    private readonly local: OwnerOps,
    private readonly logger: Logger,
    private readonly requestTimeoutMs = 30_000,
  ) {}

  start(): void {
    this.subscription = this.nats.nc.subscribe(SUBJECTS.sessionsReplica(this.ownership.replicaId), {
      callback: (error, message) => {
        if (error) return this.logger.warn({ err: error }, 'owner subscription failed');
        void this.serve(message.json<Call>()).then((reply) => message.respond(JSON.stringify(reply)));
      },
    });
  }

  async stop(): Promise<void> {
    await this.subscription?.drain();
  }

  getQr(instanceId: string, waitMs: number): Promise<string> {
    return this.route({ op: 'getQr', instanceId, args: [instanceId, waitMs] }, waitMs + 5_000) as Promise<string>;
  }

  getPairingCode(instanceId: string, number: string, waitMs: number): Promise<string> {
    return this.route({ op: 'getPairingCode', instanceId, args: [instanceId, number, waitMs] }, waitMs + 5_000) as Promise<string>;
  }

  reconnect(instanceId: string): Promise<void> {
    return this.route({ op: 'reconnect', instanceId, args: [instanceId] }) as Promise<void>;
  }

  checkNumbers(instanceId: string, numbers: string[]): Promise<NumberCheck[]> {
    return this.route({ op: 'checkNumbers', instanceId, args: [instanceId, numbers] }) as Promise<NumberCheck[]>;
  }

  listGroups(instanceId: string): Promise<GroupInfo[]> {
    return this.route({ op: 'listGroups', instanceId, args: [instanceId] }) as Promise<GroupInfo[]>;
  }

  sandboxScan(instanceId: string, number: string): Promise<void> {
    return this.route({ op: 'sandboxScan', instanceId, args: [instanceId, number] }) as Promise<void>;
  }

  sandboxInbound(instanceId: string, inbound: SandboxInboundCall): Promise<void> {
    return this.route({ op: 'sandboxInbound', instanceId, args: [instanceId, inbound] }) as Promise<void>;
  }

  sandboxRestrict(instanceId: string, untilMs: number | null, lift: boolean): Promise<void> {
    return this.route({ op: 'sandboxRestrict', instanceId, args: [instanceId, untilMs, lift] }) as Promise<void>;
  }

  markRead(instanceId: string, messageId: string): Promise<void> {
    return this.route({ op: 'markRead', instanceId, args: [instanceId, messageId] }) as Promise<void>;
  }

  private async route(call: Call, timeoutMs = this.requestTimeoutMs): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      if (this.ownership.owns(call.instanceId)) return this.runLocal(call);
      if (this.ownership.isFree(call.instanceId)) {
        if (!TAKES_FREE.has(call.op) || (await this.ownership.acquire(call.instanceId))) return this.runLocal(call);
      }
      const owner = this.ownership.holderOf(call.instanceId);
      if (owner) {
        const reply = await this.ask(owner, call, timeoutMs);
        if (reply.ok) return reply.value;
        if (reply.code !== 'not_owner') throw fromErrorDetail(reply);
      }
      if (attempt >= ATTEMPTS) {
        throw unavailable('owner_unreachable', 'The replica that runs this instance is not answering; try again in a few seconds');
      }
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }

  private async ask(owner: string, call: Call, timeoutMs: number): Promise<Reply> {
    try {
      // A dropped connection ends the wait at once (the reply cannot come); the retry goes out on the new one.
      const message = await this.nats.whileConnected(() => this.nats.nc.request(SUBJECTS.sessionsReplica(owner), JSON.stringify(call), { timeout: timeoutMs }));
      return message.json<Reply>();
    } catch (error) {
      // No responders or a time-out: the holder is gone or stuck; the lease expires and someone takes over.
      this.throttle.maybe(`ask:${owner}`, (heldBack) =>
        this.logger.warn({ err: error, owner, instanceId: call.instanceId, op: call.op, heldBack }, 'the owning replica did not answer'),
      );
      return { ok: false, kind: 'unavailable', code: 'not_owner', message: 'the owner did not answer' };
    }
  }

  private async serve(call: Call): Promise<Reply> {
    if (!this.ownership.owns(call.instanceId)) return { ok: false, kind: 'unavailable', code: 'not_owner', message: 'not the owner' };
    try {
      return { ok: true, value: (await this.runLocal(call)) ?? null };
    } catch (error) {
      if (!isAppError(error)) this.logger.error({ err: error, op: call.op, instanceId: call.instanceId }, 'owner operation failed');
      return { ok: false, ...toErrorDetail(error) };
    }
  }

  private runLocal(call: Call): Promise<unknown> {
    switch (call.op) {
      case 'getQr':
        return this.local.getQr(...call.args);
      case 'getPairingCode':
        return this.local.getPairingCode(...call.args);
      case 'reconnect':
        return this.local.reconnect(...call.args);
      case 'checkNumbers':
        return this.local.checkNumbers(...call.args);
      case 'listGroups':
        return this.local.listGroups(...call.args);
      case 'sandboxScan':
        return this.local.sandboxScan(...call.args);
      case 'sandboxInbound':
        return this.local.sandboxInbound(...call.args);
      case 'markRead':
        return this.local.markRead(...call.args);
      case 'sandboxRestrict':
        return this.local.sandboxRestrict(...call.args);
    }
  }
}
