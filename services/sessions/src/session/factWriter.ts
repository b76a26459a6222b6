import { randomUUID } from 'node:crypto';
import {
  AggregateCache,
  handleCommand,
  instanceDecider,
  instanceStream,
  isVersionConflict,
  loadAggregate,
  messageStream,
  type ConnectionFact,
  type EventStore,
  type InstanceState,
  type Logger,
} from '@wagw/lib';
import type { ConnectionEvent } from '../connector/port';
import type { InboundRefStore } from '../inbound/inboundRefs';
import { FactRecorder } from './factRecorder';
import { inboundEvent, receiptEvent } from './platformFacts';

type Receipt = Extract<ConnectionEvent, { type: 'receipt' }>;
type Inbound = Extract<ConnectionEvent, { type: 'inbound' }>;

/**
 * Receipts and inbound messages keep their order among themselves, on a lane of their own: they go to message streams,
 * so they never wait behind a connection fact of the instance, which is decided against the instance's state (a read
 * and a compare-and-set that take longer while NATS elects a leader).
 */
const messagesLane = (instanceId: string): string => `${instanceId}/messages`;

/** How many recipients of recent sends are remembered for their receipts (older ones are read from the log). */
const RECIPIENTS_KEPT = 100_000;

/**
 * Writes what the platform reported into the log, each fact behind the instance's earlier ones (`FactRecorder`):
 * connection facts as commands to the instance aggregate (its decider decides the events, against its own state and
 * version), receipts and inbound messages on their message streams.
 */
export class FactWriter {
  private readonly instances = new AggregateCache<InstanceState>();
  /** Recipients of messages handed to the platform, for the receipts that follow. */
  private readonly recipients = new Map<string, string>();

  constructor(
    private readonly events: EventStore,
    private readonly refs: InboundRefStore,
    logger: Logger,
    private readonly recorder: FactRecorder = new FactRecorder(logger),
  ) {}

  /** The instance's reset count as stored now (the log, not a read model that may lag): a new connection is tied to it. */
  async resetsOf(instanceId: string): Promise<number> {
    const { state } = await loadAggregate(this.events, instanceDecider, instanceStream(instanceId), this.instances);
    return state.exists ? state.resets : 0;
  }

  /** A connection fact of a connection started under `resets`; the command id is fixed once, for every retry. */
  connection(instanceId: string, fact: ConnectionFact, resets: number, now: string): void {
    const commandId = randomUUID();
    this.recorder.record(instanceId, `connection ${fact.type}`, async () => {
      await handleCommand(
        this.events,
        instanceDecider,
        instanceStream(instanceId),
        { type: 'RecordConnectionFact', fact, resets, now },
        { commandId, cache: this.instances },
      );
    });
  }

  /** Resolves once the connection facts reported so far for the instance are stored (or given up). */
  connectionFactsStored(instanceId: string): Promise<void> {
    return this.recorder.stored(instanceId);
  }

  /** Remembers who a message went to, so its receipts can say so. */
  sending(messageId: string, to: string): void {
    this.recipients.set(messageId, to);
    if (this.recipients.size > RECIPIENTS_KEPT) this.recipients.delete(this.recipients.keys().next().value as string);
  }

  receipt(instanceId: string, event: Receipt, now: string): void {
    const known = this.recipients.get(event.messageId);
    this.recorder.record(messagesLane(instanceId), `receipt ${event.status}`, async () => {
      const receipt = receiptEvent(event, known ?? (await this.recipientOf(instanceId, event.messageId)), now);
      await this.events.append(messageStream(instanceId, event.messageId), [receipt.event], { expectedVersion: 'any', commandId: receipt.commandId });
      event.stored?.();
    });
  }

  inbound(instanceId: string, event: Inbound, now: string): void {
    const inbound = inboundEvent(instanceId, event, now);
    this.recorder.record(messagesLane(instanceId), 'inbound message', async () => {
      // The ref first: once message.received is out, mark_read and media must find it.
      await this.refs.put(instanceId, inbound.messageId, event.message.ref);
      await this.events
        .append(messageStream(instanceId, inbound.messageId), [inbound.event], { expectedVersion: 0, commandId: `inbound-${inbound.messageId}` })
        .then(
          () => undefined,
          (error: unknown) => {
            // Already there: the platform delivered it twice, or an earlier attempt was stored.
            if (!isVersionConflict(error)) throw error;
          },
        );
    });
  }

  /** Resolves once every fact queued so far is stored or given up. */
  idle(): Promise<void> {
    return this.recorder.idle();
  }

  /** The recipient of a message this replica did not send (it took the instance over): from MessageAccepted. */
  private async recipientOf(instanceId: string, messageId: string): Promise<string> {
    const [first] = await this.events.readStream(messageStream(instanceId, messageId));
    const accepted = first?.events.find((e) => e.type === 'MessageAccepted');
    return accepted ? String(accepted.data.to) : '';
  }
}
