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
 * The emulator's stand-in for WhatsApp's root certificate key, one per test process. Baileys 7 verifies the
 * intermediate certificate against `WA_CERT_DETAILS.PUBLIC_KEY`; tests substitute this key there
 * (`trustEmulatorRoot`, and `preloadTrust.cjs` for service processes). Production never does.
 */
export const EMULATOR_ROOT: KeyPair = Curve.generateKeyPair();

/**
 * The certificate chain Baileys 7 checks in noise-handler.js: the intermediate signed by the root key it trusts,
 * `issuerSerial` 0, the leaf signed by the intermediate's key. The leaf names the server's static key, as the real
 * one does (Baileys does not compare the two).
 */
export const certificateChain = (serverStatic: KeyPair, root: KeyPair = EMULATOR_ROOT): Uint8Array => {
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
    intermediate: { details: intermediateDetails, signature: Curve.sign(root.private, intermediateDetails) },
    leaf: { details: leafDetails, signature: Curve.sign(intermediate.private, leafDetails) },
  }).finish();
};

export interface ClientFinish {
  /** The client's static Noise key (creds.noiseKey.public), which identifies a paired device at login. */
  clientStaticKey: Buffer;
  payload: proto.ClientPayload;
}

/**
 * The responder side of Noise_XX_25519_AESGCM_SHA256 as Baileys' initiator runs it (Baileys 7's hkdf is synchronous): one shared counter for both
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
  serverHello(clientHelloFrame: Uint8Array): Uint8Array {
    const clientEphemeral = proto.HandshakeMessage.decode(clientHelloFrame).clientHello?.ephemeral;
    if (!clientEphemeral || clientEphemeral.length !== 32) throw new Error('client hello without a 32-byte ephemeral key');
    this.authenticate(clientEphemeral);
    this.authenticate(this.ephemeral.public);
    this.mixIntoKey(Curve.sharedKey(this.ephemeral.private, clientEphemeral));
    const staticEnc = this.encrypt(this.staticKey.public);
    this.mixIntoKey(Curve.sharedKey(this.staticKey.private, clientEphemeral));
    const payloadEnc = this.encrypt(this.certificate);
    return proto.HandshakeMessage.encode({
      serverHello: { ephemeral: this.ephemeral.public, static: staticEnc, payload: payloadEnc },
    }).finish();
  }

  /** Reads the client finish: the client's static key, then its ClientPayload. */
  clientFinish(frame: Uint8Array): ClientFinish {
    const finish = proto.HandshakeMessage.decode(frame).clientFinish;
    if (!finish?.static || !finish.payload) throw new Error('client finish without static key or payload');
    const clientStaticKey = this.decrypt(finish.static);
    this.mixIntoKey(Curve.sharedKey(this.ephemeral.private, clientStaticKey));
    const payload = proto.ClientPayload.decode(this.decrypt(finish.payload));
    return { clientStaticKey, payload };
  }

  /** The transport keys: the client writes with the first half, so the server reads with it. */
  split(): TransportCipher {
    const keys = hkdf(Buffer.alloc(0), 64, { salt: this.salt, info: '' });
    const readKey = Buffer.from(keys.subarray(0, 32));
    const writeKey = Buffer.from(keys.subarray(32));
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

  private mixIntoKey(material: Uint8Array): void {
    const keys = hkdf(Buffer.from(material), 64, { salt: this.salt, info: '' });
    this.salt = Buffer.from(keys.subarray(0, 32));
    this.key = Buffer.from(keys.subarray(32));
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
