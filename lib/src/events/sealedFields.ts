import { WEBHOOK_EVENT_TYPES } from './webhookEventTypes';

/**
 * The one list of content fields: what a user or a phone typed (texts, captions, media URLs, file names, push
 * names, a location sent), sealed in the log with the instance's data key and read as `null` (with `erased: true` on the event's data)
 * once the key is destroyed. Everything else an event holds stays readable: types, times, ids, numbers, states,
 * reasons. A path names a field of the event's `data`; `a.b` is field `b` of the object in `a` (when `a` is null
 * there is nothing to seal). To seal a new free-text field, add its path here: new events seal it; older events keep
 * reading as they were written (see `sealedEventStore.ts`).
 */
export const SEALED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  // A location's coordinates are where someone is: content, as its name (sealed since 2026-11-24; earlier events
  // keep theirs readable).
  MessageAccepted: ['text', 'media_url', 'filename', 'location.name', 'location.latitude', 'location.longitude', 'vcard', 'reaction.emoji'],
  MessageReceived: ['push_name', 'text', 'media.filename'],
};

/**
 * Webhook payloads (the WEBHOOKS store's `DeliveryScheduled.body`) of the webhook types whose events have content
 * fields (`message.received`), with the domain type each comes from: sealed too. Payloads of other types (receipts, instance changes) hold no content,
 * and stay readable, so their retries survive an erasure and they never make a key.
 */
const SEALED_PAYLOAD_DOMAINS: ReadonlyMap<string, string> = new Map(
  Object.entries(WEBHOOK_EVENT_TYPES)
    .filter(([domainType]) => domainType in SEALED_FIELDS)
    .map(([domainType, webhookType]) => [webhookType, domainType]),
);

/**
 * Whether the content of an event at `eventAtMs` was destroyed by the instance's latest erasure at `erasedAtMs` (null:
 * never erased): it was, at or before it. Decided by time wherever a copy opened before the erasure may still be held
 * (a send waiting its turn, a webhook in a lane or a cache), since such a copy no longer asks the key.
 */
export const erasedByErasureAt = (erasedAtMs: number | null, eventAtMs: number): boolean => erasedAtMs !== null && eventAtMs <= erasedAtMs;

/** Whether a webhook payload of this type holds content (sealed in the store, erased by `erase_instance_data`). */
export const webhookPayloadSealed = (webhookType: string): boolean => SEALED_PAYLOAD_DOMAINS.has(webhookType);

/** The content paths of an event of `type` with this data. */
const pathsOf = (type: string, data: Record<string, unknown>): readonly string[] =>
  type === 'DeliveryScheduled' ? (SEALED_PAYLOAD_DOMAINS.has(String(data.event_type)) ? ['body'] : []) : (SEALED_FIELDS[type] ?? []);

/** The field of a stored event's data that holds its sealed content (`SealedContent`); absent on plaintext events. */
export const SEALED_KEY = '$sealed';

type Data = Record<string, unknown>;

const isObject = (value: unknown): value is Data => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A path's fields, split once: the paths are few and fixed, and this runs for every event appended or read. */
const splitPaths = new Map<string, readonly string[]>();
const partsOf = (path: string): readonly string[] => {
  let parts = splitPaths.get(path);
  if (parts === undefined) {
    parts = path.split('.');
    splitPaths.set(path, parts);
  }
  return parts;
};

/** The object holding a path's last field, and that field's name (null when a parent on the way is not an object). */
const holderOf = (data: Data, path: string): { holder: Data; field: string } | null => {
  const parts = partsOf(path);
  let holder: unknown = data;
  for (let i = 0; i < parts.length - 1; i++) holder = isObject(holder) ? holder[parts[i]!] : undefined;
  return isObject(holder) ? { holder, field: parts[parts.length - 1]! } : null;
};

/** A deep enough copy of `data` to change the objects on the listed paths. */
const copyAlong = (data: Data, paths: readonly string[]): Data => {
  const copy: Data = { ...data };
  for (const path of paths) {
    const parts = partsOf(path);
    let holder = copy;
    for (let i = 0; i < parts.length - 1; i++) {
      const part = parts[i]!;
      if (!isObject(holder[part])) break;
      holder[part] = { ...holder[part] };
      holder = holder[part] as Data;
    }
  }
  return copy;
};

/**
 * An event's data split into what stays readable and its content (path -> value), or null when the type has no
 * content fields or none holds a value (null is no content: it stays as it is).
 */
export const takeContent = (type: string, data: Data): { rest: Data; content: Data } | null => {
  const paths = pathsOf(type, data);
  if (paths.length === 0) return null;
  const rest = copyAlong(data, paths);
  const content: Data = {};
  for (const path of paths) {
    const at = holderOf(rest, path);
    if (!at || at.holder[at.field] === undefined || at.holder[at.field] === null) continue;
    content[path] = at.holder[at.field];
    // Left as null, not deleted: an erased event then shows which content fields it had (names are not content).
    at.holder[at.field] = null;
  }
  return Object.keys(content).length > 0 ? { rest, content } : null;
};

/** The data with its content put back where `takeContent` took it from. */
export const putContent = (rest: Data, content: Data): Data => {
  const data = copyAlong(rest, Object.keys(content));
  for (const [path, value] of Object.entries(content)) {
    const at = holderOf(data, path);
    if (at) at.holder[at.field] = value;
  }
  return data;
};

/** The data of an event whose key was destroyed: each content field present reads null, and `erased: true` says why. */
export const erasedContent = (type: string, rest: Data): Data => {
  const paths = pathsOf(type, rest);
  const data = copyAlong(rest, paths);
  for (const path of paths) {
    const at = holderOf(data, path);
    if (at && at.field in at.holder) at.holder[at.field] = null;
  }
  return { ...data, erased: true };
};

/**
 * A webhook payload's data as a payload of an erased event reads (its content fields null, `erased: true`): what a
 * replay sends of a message whose content was erased, even when it was read before the erasure.
 */
export const erasedPayloadData = (webhookType: string, data: Data): Data => {
  const domainType = SEALED_PAYLOAD_DOMAINS.get(webhookType);
  return domainType ? erasedContent(domainType, data) : data;
};
