import { getBinaryNodeChild, getBinaryNodeChildren, type BinaryNode } from '@whiskeysockets/baileys';
import { groupIqAnswer } from './groups';
import type { MediaHost } from './mediaHost';
import { timelockAnswer } from './restrictions';
import { LID_SERVER, USER_SERVER, numberOf, type PairedDevice, type Registry } from './registry';

const SERVER = 's.whatsapp.net';
const MAX_UPLOADED_PRE_KEYS = 812;

export const iqResult = (request: BinaryNode, content?: BinaryNode[]): BinaryNode => ({
  tag: 'iq',
  attrs: { from: SERVER, type: 'result', id: request.attrs.id ?? '' },
  ...(content ? { content } : {}),
});

export const iqError = (request: BinaryNode, code: number, text: string): BinaryNode => ({
  tag: 'iq',
  attrs: { from: SERVER, type: 'error', id: request.attrs.id ?? '' },
  content: [{ tag: 'error', attrs: { code: String(code), text } }],
});

const bytes = (node: BinaryNode | undefined, tag: string): Buffer | undefined => {
  const content = getBinaryNodeChild(node, tag)?.content;
  return content instanceof Uint8Array ? Buffer.from(content) : undefined;
};

const uint = (node: BinaryNode | undefined, tag: string): number | undefined => {
  const value = bytes(node, tag);
  return value && value.length > 0 && value.length <= 6 ? value.readUIntBE(0, value.length) : undefined;
};

/** `<iq xmlns="encrypt" type="set">`: the companion's registration id, identity, signed pre-key and pre-keys. */
const storePreKeys = (device: PairedDevice, request: BinaryNode): void => {
  const keys = device.keys;
  keys.registrationId = uint(request, 'registration') ?? keys.registrationId;
  keys.identityKey = bytes(request, 'identity') ?? keys.identityKey;
  const skey = getBinaryNodeChild(request, 'skey');
  const skeyId = uint(skey, 'id');
  const skeyValue = bytes(skey, 'value');
  const skeySignature = bytes(skey, 'signature');
  if (skeyId !== undefined && skeyValue && skeySignature) {
    keys.signedPreKey = { keyId: skeyId, publicKey: skeyValue, signature: skeySignature };
  }
  for (const key of getBinaryNodeChildren(getBinaryNodeChild(request, 'list'), 'key')) {
    const id = uint(key, 'id');
    const value = bytes(key, 'value');
    if (id !== undefined && value) keys.preKeys.set(id, value);
  }
  for (const id of keys.preKeys.keys()) {
    if (keys.preKeys.size <= MAX_UPLOADED_PRE_KEYS) break;
    keys.preKeys.delete(id);
  }
};

/**
 * `<iq xmlns="encrypt" type="get"><key><user jid/>…`: the pre-key bundle of each phone (device 0) asked for, by
 * phone-number jid or (Baileys 7) by LID.
 */
const preKeyBundles = (registry: Registry, request: BinaryNode): BinaryNode[] => {
  const users = getBinaryNodeChildren(getBinaryNodeChild(request, 'key'), 'user').map(({ attrs }) => {
    const jid = attrs.jid ?? '';
    const { number, device } = registry.addressOf(jid);
    // Companions are never listed by usync here, and unregistered numbers have no keys.
    if (!number || device !== 0 || !registry.isRegistered(number)) {
      return { tag: 'user', attrs: { jid }, content: [{ tag: 'error', attrs: { code: '404', text: 'item-not-found' } }] };
    }
    return registry.user(number).bundleNode(jid);
  });
  return [{ tag: 'list', attrs: {}, content: users }];
};

/** `<iq xmlns="usync">`: devices (only the phone, device 0), contact (in/out), LID, status, disappearing mode. */
const usync = (registry: Registry, request: BinaryNode): BinaryNode[] => {
  const query = getBinaryNodeChild(request, 'usync');
  const queryContent = getBinaryNodeChild(query, 'query')?.content;
  const protocols = Array.isArray(queryContent) ? queryContent.map((protocol) => protocol.tag) : [];
  const users = getBinaryNodeChildren(getBinaryNodeChild(query, 'list'), 'user').map((user) => {
    const contact = getBinaryNodeChild(user, 'contact')?.content;
    const phone = typeof contact === 'string' ? contact : contact instanceof Uint8Array ? Buffer.from(contact).toString() : undefined;
    const number = user.attrs.jid ? registry.addressOf(user.attrs.jid).number : numberOf(phone ?? '');
    const registered = registry.isRegistered(number);
    const content: BinaryNode[] = protocols.flatMap((protocol): BinaryNode[] => {
      switch (protocol) {
        case 'devices':
          return [
            {
              tag: 'devices',
              attrs: {},
              content: [{ tag: 'device-list', attrs: {}, content: registered ? [{ tag: 'device', attrs: { id: '0' } }] : [] }],
            },
          ];
        case 'contact':
          return [{ tag: 'contact', attrs: { type: registered ? 'in' : 'out' } }];
        case 'lid':
          return registered ? [{ tag: 'lid', attrs: { val: `${registry.lidOf(number)}@${LID_SERVER}` } }] : [];
        case 'status':
          return [{ tag: 'status', attrs: { t: '0' }, content: Buffer.from('Hey there! I am using WhatsApp.') }];
        case 'disappearing_mode':
          return [{ tag: 'disappearing_mode', attrs: { duration: '0', t: '0' } }];
        default:
          return [];
      }
    });
    return { tag: 'user', attrs: { jid: `${number}@${USER_SERVER}` }, content };
  });
  return [
    {
      tag: 'usync',
      attrs: { ...query?.attrs, last: 'true', index: '0' },
      content: [{ tag: 'list', attrs: {}, content: users }],
    },
  ];
};

const PRIVACY = ['last', 'online', 'profile', 'status', 'groupadd', 'readreceipts', 'calladd'];

/**
 * Answers an iq of a logged-in companion. `passive` and `w:sync:app:state` are answered by the connection, which
 * ties them to the login sequence. Anything unknown gets a 501 error, so a client feature the emulator lacks fails
 * loudly instead of hanging until the query time-out.
 */
export const answerIq = (registry: Registry, media: MediaHost, device: PairedDevice, request: BinaryNode): BinaryNode => {
  const { xmlns, type } = request.attrs;
  const first = Array.isArray(request.content) ? request.content[0]?.tag : undefined;
  switch (xmlns) {
    case 'w:p':
      return iqResult(request);
    case 'encrypt':
      if (type === 'get' && first === 'count') {
        return iqResult(request, [{ tag: 'count', attrs: { value: String(device.keys.preKeys.size) } }]);
      }
      if (type === 'get' && first === 'key') return iqResult(request, preKeyBundles(registry, request));
      // Baileys 7 checks its key bundle after login; any digest node means "the server holds it".
      if (type === 'get' && first === 'digest') return iqResult(request, [{ tag: 'digest', attrs: {} }]);
      if (type === 'set') {
        storePreKeys(device, request);
        return iqResult(request);
      }
      break;
    case 'usync':
      return iqResult(request, usync(registry, request));
    case 'w':
    case 'abt':
      return iqResult(request, [{ tag: 'props', attrs: { protocol: '2' } }]);
    case 'blocklist':
      return iqResult(request, [{ tag: 'list', attrs: {} }]);
    case 'privacy':
      if (type === 'get') {
        return iqResult(request, [{ tag: 'privacy', attrs: {}, content: PRIVACY.map((name) => ({ tag: 'category', attrs: { name, value: 'all' } })) }]);
      }
      return iqResult(request);
    case 'w:m':
      return iqResult(request, [
        {
          tag: 'media_conn',
          attrs: { auth: media.auth, ttl: '3600', auth_ttl: '21600', max_buckets: '12' },
          content: [{ tag: 'host', attrs: { hostname: media.host, maxContentLengthBytes: String(64 * 1024 * 1024) } }],
        },
      ]);
    case 'md':
      if (first === 'remove-companion-device') {
        registry.forget(device);
        return iqResult(request);
      }
      break;
    case 'w:stats':
      return iqResult(request);
    case 'w:g2': {
      const answer = groupIqAnswer(registry, device, request);
      if (Array.isArray(answer)) return iqResult(request, answer);
      if (answer) return iqError(request, answer.error, answer.text);
      break;
    }
    case 'w:mex': {
      const answer = timelockAnswer(request, registry.restrictions.of(device.number));
      if (answer) return answer;
      break;
    }
    default:
      break;
  }
  registry.options.log('unhandled iq', { xmlns, type, first });
  return iqError(request, 501, 'feature-not-implemented');
};

/** `<iq xmlns="w:sync:app:state">`: every collection asked for, empty (no patches, no snapshot). */
export const appStateAnswer = (request: BinaryNode): BinaryNode => {
  const collections = getBinaryNodeChildren(getBinaryNodeChild(request, 'sync'), 'collection').map(({ attrs }) => ({
    tag: 'collection',
    attrs: { name: attrs.name ?? '', version: attrs.version ?? '0' },
  }));
  return iqResult(request, [{ tag: 'sync', attrs: {}, content: collections }]);
};
