/**
 * The one list of content fields: what a user or a phone typed (texts, captions, media URLs, file names, push
 * names), sealed in the log with the instance's data key and read as `null` (with `erased: true` on the event's data)
 * once the key is destroyed. Everything else an event holds stays readable: types, times, ids, numbers, states,
 * reasons. A path names a field of the event's `data`; `a.b` is field `b` of the object in `a` (when `a` is null
 * there is nothing to seal). To seal a new free-text field, add its path here: new events seal it; older events keep
 * reading as they were written (see `sealedEventStore.ts`).
 */
export const SEALED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  MessageAccepted: ['text', 'media_url', 'filename'],
  MessageReceived: ['push_name', 'text', 'media.filename'],
  /** WEBHOOKS store: the payload a delivery sends holds the event's content. */
  DeliveryScheduled: ['body'],
};

/** The field of a stored event's data that holds its sealed content (`SealedContent`); absent on plaintext events. */
export const SEALED_KEY = '$sealed';

type Data = Record<string, unknown>;

const isObject = (value: unknown): value is Data => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The object holding a path's last field, and that field's name (null when a parent on the way is not an object). */
const holderOf = (data: Data, path: string): { holder: Data; field: string } | null => {
  const parts = path.split('.');
  let holder: unknown = data;
  for (const part of parts.slice(0, -1)) holder = isObject(holder) ? holder[part] : undefined;
  return isObject(holder) ? { holder, field: parts[parts.length - 1]! } : null;
};

/** A deep enough copy of `data` to change the objects on the listed paths. */
const copyAlong = (data: Data, paths: readonly string[]): Data => {
  const copy: Data = { ...data };
  for (const path of paths) {
    const parts = path.split('.');
    let holder = copy;
    for (const part of parts.slice(0, -1)) {
      if (!isObject(holder[part])) break;
      holder[part] = { ...holder[part] };
      holder = holder[part] as Data;
    }
  }
  return copy;
};

/**
 * An event's data split into what stays readable and its content (path -> value), or null when the type has no
 * content fields or none is present.
 */
export const takeContent = (type: string, data: Data): { rest: Data; content: Data } | null => {
  const paths = SEALED_FIELDS[type];
  if (!paths) return null;
  const rest = copyAlong(data, paths);
  const content: Data = {};
  for (const path of paths) {
    const at = holderOf(rest, path);
    if (!at || at.holder[at.field] === undefined) continue;
    content[path] = at.holder[at.field];
    delete at.holder[at.field];
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
  const paths = SEALED_FIELDS[type] ?? [];
  const data = copyAlong(rest, paths);
  for (const path of paths) {
    const at = holderOf(data, path);
    if (at) at.holder[at.field] = null;
  }
  return { ...data, erased: true };
};
