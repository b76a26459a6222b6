import { SenderKeyRecord, type SenderKeyName } from '@whiskeysockets/baileys/lib/Signal/Group/index.js';

export const GROUP_SERVER = 'g.us';
const MAX_GROUPS = 1_000;
const MAX_SENDER_KEYS = 10_000;

/** A group the emulator plays: its participants are numbers (each one's phone, device 0, plus its companions). */
export interface EmulatedGroup {
  /** The group jid, e.g. '120363000000000001@g.us'. */
  id: string;
  subject: string;
  creator: string;
  participants: string[];
  creation: number;
  /** How the group names its members: by phone number, or by LID (as WhatsApp does for most groups now). */
  addressing: 'pn' | 'lid';
}

/**
 * The groups and the sender keys every phone learnt. A phone's sender-key store is keyed by the sender key name
 * (group, sender, device), as libsignal's is; records are kept as objects (the cipher updates them in place).
 */
export class Groups {
  private readonly groups = new Map<string, EmulatedGroup>();
  private readonly senderKeys = new Map<string, SenderKeyRecord>();
  private sequence = 0;

  create(subject: string, participants: readonly string[], addressing: 'pn' | 'lid' = 'pn'): EmulatedGroup {
    if (this.groups.size >= MAX_GROUPS) throw new Error(`the emulator plays at most ${MAX_GROUPS} groups`);
    if (participants.length === 0) throw new Error('a group needs participants (the first is its creator)');
    this.sequence += 1;
    const id = `120363${this.sequence.toString().padStart(12, '0')}@${GROUP_SERVER}`;
    const group = { id, subject, creator: participants[0]!, participants: [...new Set(participants)], creation: Math.floor(Date.now() / 1000), addressing };
    this.groups.set(id, group);
    return group;
  }

  get(id: string): EmulatedGroup | undefined {
    return this.groups.get(id);
  }

  /** The groups `number` takes part in. */
  of(number: string): EmulatedGroup[] {
    return [...this.groups.values()].filter((group) => group.participants.includes(number));
  }

  /** The sender-key store of `number`'s phone. */
  storeOf(number: string): {
    loadSenderKey(name: SenderKeyName): Promise<SenderKeyRecord>;
    storeSenderKey(name: SenderKeyName, record: SenderKeyRecord): Promise<void>;
  } {
    return {
      loadSenderKey: async (name) => this.senderKeys.get(`${number}|${name.toString()}`) ?? new SenderKeyRecord(),
      storeSenderKey: async (name, record) => {
        if (this.senderKeys.size >= MAX_SENDER_KEYS) throw new Error(`the emulator keeps at most ${MAX_SENDER_KEYS} sender keys`);
        this.senderKeys.set(`${number}|${name.toString()}`, record);
      },
    };
  }
}
