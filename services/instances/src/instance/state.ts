/** The lifecycle states of an instance (DESIGN §3). */
export type Lifecycle = 'created' | 'connecting' | 'qr' | 'connected' | 'disconnected' | 'logged_out' | 'failed';

export interface WebhookSettings {
  url: string;
  enabled: boolean;
}

export interface ExistingInstance {
  exists: true;
  instanceId: string;
  account: string;
  createdAt: string;
  lifecycle: Lifecycle;
  /** When the instance entered its current lifecycle state. */
  since: string;
  webhook: WebhookSettings | null;
  linkedNumber: string | null;
  lastDisconnectReason: string | null;
}

export type InstanceState = { exists: false } | ExistingInstance;

export const initialState = (): InstanceState => ({ exists: false });
