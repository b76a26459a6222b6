import { Curve, NOISE_MODE, NOISE_WA_HEADER, aesDecryptGCM, aesEncryptGCM, hkdf, proto, sha256, type KeyPair } from '@whiskeysockets/baileys';

/** The post-handshake cipher: AES-256-GCM, iv = 8 zero bytes + a 32-bit counter per direction, no AAD. */
export interface TransportCipher {
  encrypt(plaintext: Uint8Array): Buffer;
  decrypt(ciphertext: Uint8Array): Buffer;
}

const ivOf = (counter: number): Buffer => {
  const iv = Buffer.alloc(12);
  iv.writeUInt32BE(counter, 8);
  return iv;
};

const NO_AAD = Buffer.alloc(0);
const YEAR_S = 365 * 86_400;

/**
 * A certificate chain 6.17.16 accepts: it decodes `intermediate.details` and checks only `issuerSerial === 0`
 * (noise-handler.js processHandshake). The chain is still signed end to end with throwaway keys, the leaf
 * naming the server's static key, so it looks like the real one.
 */
export const certificateChain = (serverStatic: KeyPair): Uint8Array => {
  const root = Curve.generateKeyPair();
  const intermediate = Curve.generateKeyPair();
  const now = Math.floor(Date.now() / 1000);
  const details = (serial: number, issuerSerial: number, key: Uint8Array): Uint8Array =>
    proto.CertChain.NoiseCertificate.Details.encode({
      serial,
      issuerSerial,
      key,
      notBefore: now - YEAR_S,
      notAfter: now + YEAR_S,
    }).finish();
  const intermediateDetails = details(1, 0, intermediate.public);
  const leafDetails = details(2, 1, serverStatic.public);
  return proto.CertChain.encode({
    intermediate: { details: intermediateDetails, signature: Curve.sign(root.private, intermediateDetails) as Uint8Array },
    leaf: { details: leafDetails, signature: Curve.sign(intermediate.private, leafDetails) as Uint8Array },
  }).finish();
};

export interface ClientFinish {
  /** The client's static Noise key (creds.noiseKey.public), which identifies a paired device at login. */
  clientStaticKey: Buffer;
  payload: proto.ClientPayload;
}

/**
 * The responder side of Noise_XX_25519_AESGCM_SHA256 as Baileys' initiator runs it: one shared counter for both
 * directions until the split, the handshake hash as AAD, and HKDF-SHA256 key mixing with Baileys' own hkdf.
 */
export class NoiseResponder {
  private hash: Buffer;
  private salt: Buffer;
  private key: Buffer;
  private counter = 0;
  private readonly ephemeral: KeyPair = Curve.generateKeyPair();

  constructor(
    private readonly staticKey: KeyPair,
    private readonly certificate: Uint8Array,
  ) {
    const mode = Buffer.from(NOISE_MODE, 'latin1');
    this.hash = mode;
    this.salt = mode;
    this.key = mode;
    this.authenticate(NOISE_WA_HEADER);
  }

  /** Reads the client hello and returns the encoded server hello. */
  async serverHello(clientHelloFrame: Uint8Array): Promise<Uint8Array> {
    const clientEphemeral = proto.HandshakeMessage.decode(clientHelloFrame).clientHello?.ephemeral;
    if (!clientEphemeral || clientEphemeral.length !== 32) throw new Error('client hello without a 32-byte ephemeral key');
    this.authenticate(clientEphemeral);
    this.authenticate(this.ephemeral.public);
    await this.mixIntoKey(Curve.sharedKey(this.ephemeral.private, clientEphemeral));
    const staticEnc = this.encrypt(this.staticKey.public);
    await this.mixIntoKey(Curve.sharedKey(this.staticKey.private, clientEphemeral));
    const payloadEnc = this.encrypt(this.certificate);
    return proto.HandshakeMessage.encode({
      serverHello: { ephemeral: this.ephemeral.public, static: staticEnc, payload: payloadEnc },
    }).finish();
  }

  /** Reads the client finish: the client's static key, then its ClientPayload. */
  async clientFinish(frame: Uint8Array): Promise<ClientFinish> {
    const finish = proto.HandshakeMessage.decode(frame).clientFinish;
    if (!finish?.static || !finish.payload) throw new Error('client finish without static key or payload');
    const clientStaticKey = this.decrypt(finish.static);
    await this.mixIntoKey(Curve.sharedKey(this.ephemeral.private, clientStaticKey));
    const payload = proto.ClientPayload.decode(this.decrypt(finish.payload));
    return { clientStaticKey, payload };
  }

  /** The transport keys: the client writes with the first half, so the server reads with it. */
  async split(): Promise<TransportCipher> {
    const keys = await hkdf(Buffer.alloc(0), 64, { salt: this.salt, info: '' });
    const readKey = keys.subarray(0, 32);
    const writeKey = keys.subarray(32);
    let readCounter = 0;
    let writeCounter = 0;
    return {
      encrypt: (plaintext) => aesEncryptGCM(plaintext, writeKey, ivOf(writeCounter++), NO_AAD),
      decrypt: (ciphertext) => aesDecryptGCM(ciphertext, readKey, ivOf(readCounter++), NO_AAD),
    };
  }

  private authenticate(data: Uint8Array): void {
    this.hash = sha256(Buffer.concat([this.hash, data]));
  }

  private async mixIntoKey(material: Uint8Array): Promise<void> {
    const keys = await hkdf(Buffer.from(material), 64, { salt: this.salt, info: '' });
    this.salt = keys.subarray(0, 32);
    this.key = keys.subarray(32);
    this.counter = 0;
  }

  private encrypt(plaintext: Uint8Array): Buffer {
    const ciphertext = aesEncryptGCM(plaintext, this.key, ivOf(this.counter++), this.hash);
    this.authenticate(ciphertext);
    return ciphertext;
  }

  private decrypt(ciphertext: Uint8Array): Buffer {
    const plaintext = aesDecryptGCM(ciphertext, this.key, ivOf(this.counter++), this.hash);
    this.authenticate(ciphertext);
    return plaintext;
  }
}
