import { decodeCommit } from '../eventStore/codec';
import { upcastEvent } from './upcasters';

/** A commit's body exactly as the log stores it (short keys; `v` is the schema version it was written in). */
const stored = (type: string, v: number, data: Record<string, unknown>): string =>
  JSON.stringify({ events: [{ type, v, at: '2026-01-01T00:00:00.000Z', data }] });

describe('schema evolution (upcasting on read)', () => {
  it('reads an InstanceDisconnected stored in version 1 as version 2', () => {
    const [event] = decodeCommit('I.instance', 7, 'c', stored('InstanceDisconnected', 1, { reason: 'connection_lost' })).events;
    expect(event).toMatchObject({ type: 'InstanceDisconnected', schemaVersion: 2, data: { reason: 'connection_lost', reconnecting: true } });
  });

  it('leaves an event of the current version, and types without steps, as they are', () => {
    const current = { reason: 'connection_lost', reconnecting: true };
    expect(upcastEvent('InstanceDisconnected', 2, current)).toEqual({ schemaVersion: 2, data: current });
    expect(upcastEvent('InstanceReset', 1, {})).toEqual({ schemaVersion: 1, data: {} });
    expect(upcastEvent('DeliveryScheduled', 1, { delivery_id: 'evt_1_0' })).toEqual({ schemaVersion: 1, data: { delivery_id: 'evt_1_0' } });
  });
});
