import { handleCommand, instanceDecider, instanceStream, type EventStore } from '@wagw/lib';

/**
 * Switches an instance's webhook off because its endpoint at `url` answered 410 Gone: a command to the instance
 * aggregate, whose decider ignores it when the webhook was reconfigured meanwhile (a new URL is not switched off by
 * the old one's answer) or is already off. `commandId` names the attempt that got the 410, so a retry is a no-op.
 */
export const disableWebhook = async (events: EventStore, instanceId: string, url: string, reason: string, at: string, commandId: string): Promise<void> => {
  await handleCommand(events, instanceDecider, instanceStream(instanceId), { type: 'DisableWebhook', url, reason, now: at }, { commandId });
};
