import { BUCKETS } from '@wagw/lib';
import {
  BufferJSON,
  proto,
  type AuthenticationCreds,
  type AuthenticationState,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
} from '@whiskeysockets/baileys';
import type { Logger, NatsHandle } from '@wagw/lib';
import { encodedToken, NatsTextBucket, token, type TextBucket } from './textBucket';

type KeyType = keyof SignalDataTypeMap;

/** One instance's Baileys auth state, and how its writes reach the store. */
export interface InstanceAuthState {
  /** What the socket takes as `auth`. Baileys updates `creds` in place; `saveCreds` persists it. */
  readonly state: AuthenticationState;
  /** Writes the creds as they are now (after the writes queued before). Logs and rejects when it fails. */
  saveCreds(): Promise<void>;
  /** Resolves once every write queued so far has settled, whatever the outcome. */
  flush(): Promise<void>;
}

/** Whether creds belong to a linked device: pairing sets both (`registered` stays false after a QR scan). */
export const isLinked = (creds: Pick<AuthenticationCreds, 'me' | 'account'>): boolean => !!creds.me && !!creds.account;

const credsKey = (instanceId: string): string => `${token(instanceId, 'instance id')}.creds`;
const signalKey = (instanceId: string, type: KeyType, id: string): string =>
  `${token(instanceId, 'instance id')}.${token(type, 'key type')}.${encodedToken(id)}`;

const encode = (value: unknown): string => JSON.stringify(value, BufferJSON.replacer);

const decode = <T extends KeyType>(type: T, text: string): SignalDataTypeMap[T] => {
  const value: unknown = JSON.parse(text, BufferJSON.reviver);
  // BufferJSON brings the bytes back; app-state keys must also be protobuf objects again.
  const revived = type === 'app-state-sync-key' ? proto.Message.AppStateSyncKeyData.fromObject(value as Record<string, unknown>) : value;
  return revived as SignalDataTypeMap[T];
};

/**
 * Baileys auth states (creds and Signal keys) in a NATS KV bucket, so any replica can take an instance over without
 * a new QR code. Keys: `<instance>.creds` and `<instance>.<type>.<base64url(id)>`; values are BufferJSON text.
 * An instance's writes run one after another, in the order they were asked for, so a later ratchet state never
 * lands before an earlier one; a failed key write rejects, so Baileys' transaction layer retries it.
 */
export class AuthStateStore {
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly bucket: TextBucket,
    private readonly logger: Logger,
  ) {}

  static async open(nats: NatsHandle, logger: Logger, bucket = BUCKETS.waAuth): Promise<AuthStateStore> {
    return new AuthStateStore(await NatsTextBucket.open(nats, bucket), logger);
  }

  /** The stored creds of the instance, or null. */
  async readCreds(instanceId: string): Promise<AuthenticationCreds | null> {
    const text = await this.bucket.get(credsKey(instanceId));
    return text === null ? null : (JSON.parse(text, BufferJSON.reviver) as AuthenticationCreds);
  }

  /** The auth state of the instance over these creds (stored ones, or fresh ones from `initAuthCreds`). */
  state(instanceId: string, creds: AuthenticationCreds): InstanceAuthState {
    const saveCreds = (): Promise<void> =>
      this.serially(instanceId, () => this.bucket.put(credsKey(instanceId), encode(creds))).catch((error: unknown) => {
        this.logger.error({ err: error, instanceId }, 'saving the WhatsApp credentials failed');
        throw error;
      });
    return {
      state: { creds, keys: this.keyStore(instanceId) },
      saveCreds,
      flush: async () => {
        await this.queues.get(instanceId)?.catch(() => undefined);
      },
    };
  }

  /** Deletes every key of the instance (creds and Signal keys), after its writes already queued. */
  async purge(instanceId: string): Promise<void> {
    const prefix = token(instanceId, 'instance id');
    await this.serially(instanceId, async () => {
      const keys = await this.bucket.keysUnder(prefix);
      await settleAll(keys.map((key) => this.bucket.delete(key)));
    });
  }

  private keyStore(instanceId: string): SignalKeyStore {
    return {
      get: async <T extends KeyType>(type: T, ids: string[]) => {
        const texts = await Promise.all(ids.map((id) => this.bucket.get(signalKey(instanceId, type, id))));
        const found: { [id: string]: SignalDataTypeMap[T] } = {};
        ids.forEach((id, i) => {
          const text = texts[i];
          if (text !== null && text !== undefined) found[id] = decode(type, text);
        });
        return found;
      },
      set: async (data: SignalDataSet) => {
        const writes: Array<() => Promise<void>> = [];
        for (const [type, values] of Object.entries(data) as Array<[KeyType, Record<string, unknown> | undefined]>) {
          for (const [id, value] of Object.entries(values ?? {})) {
            const key = signalKey(instanceId, type, id);
            writes.push(value === null || value === undefined ? () => this.bucket.delete(key) : () => this.bucket.put(key, encode(value)));
          }
        }
        await this.serially(instanceId, () => settleInChunks(writes));
      },
    };
  }

  /** Runs `write` after every write of the instance queued before it; a failure does not stop the later ones. */
  private serially<T>(instanceId: string, write: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(instanceId) ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(write);
    this.queues.set(instanceId, run);
    const forget = (): void => {
      if (this.queues.get(instanceId) === run) this.queues.delete(instanceId);
    };
    run.then(forget, forget);
    return run;
  }
}

/** Waits for every write (so none is still in flight when the next batch starts), then throws the first failure. */
const settleAll = async (writes: Array<Promise<void>>): Promise<void> => {
  const failed = (await Promise.allSettled(writes)).find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
};

/**
 * Writes in bounded chunks rather than all at once. Baileys 7 stores 812 pre-keys at a first login: 812 KV puts in
 * flight together queued every other request of the process on the NATS connection behind them (lease renewals and
 * event appends timed out in the Baileys e2e test); 32 at a time keeps a renewal behind at most 32 puts.
 */
const WRITE_CHUNK = 32;
const settleInChunks = async (writes: Array<() => Promise<void>>): Promise<void> => {
  let failed: PromiseRejectedResult | undefined;
  for (let i = 0; i < writes.length; i += WRITE_CHUNK) {
    const results = await Promise.allSettled(writes.slice(i, i + WRITE_CHUNK).map((write) => write()));
    failed ??= results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  }
  if (failed) throw failed.reason;
};
