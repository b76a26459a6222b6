/**
 * Schema evolution. Every stored event keeps the schema version it was written in (`v` in the log; no event is ever
 * rewritten); the event store's codec (`lib/src/eventStore/codec.ts`) upcasts each one to its type's current version
 * as it is read, so every reader (history, export, status, read models, webhooks, replays) sees the current shape only.
 *
 * To add a version of an event type (see docs/architecture.md, "Schema evolution"):
 * 1. change the event's type in `instanceEvents.ts` / `messageEvents.ts` and raise its version there;
 * 2. add here the step from the previous version: `Type: { <previous version>: (data) => <data in the new shape> }`
 *    (pure, total: it must accept any payload ever stored in that version; steps chain v1 -> v2 -> v3);
 * 3. write new events in the new shape (the builders stamp the current version);
 * 4. add the old payload to the upcasters' test (`upcasters.test.ts`).
 */
type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>;

const UPCASTERS: Readonly<Record<string, Readonly<Record<number, Upcaster>>>> = {
  // v2 says what v1 left implicit: a disconnected instance reconnects on its own (logged out and failed are the
  // states it does not come back from).
  InstanceDisconnected: { 1: (data) => ({ ...data, reconnecting: true }) },
};

/** A stored event's version and payload, upcast step by step to its type's current version. */
export const upcastEvent = (type: string, schemaVersion: number, data: Record<string, unknown>): { schemaVersion: number; data: Record<string, unknown> } => {
  const steps = UPCASTERS[type];
  let version = schemaVersion;
  let current = data;
  for (let step = steps?.[version]; step; step = steps?.[version]) {
    current = step(current);
    version++;
  }
  return { schemaVersion: version, data: current };
};
