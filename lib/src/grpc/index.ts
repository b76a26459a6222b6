export * from './proto';
export * from './errors';
export * from './unary';
export type { InstancesClient } from '../generated/wagw/instances/v1/Instances';
export type { Instance__Output as InstanceMessage, Instance as InstanceInput } from '../generated/wagw/instances/v1/Instance';
export type { HistoryEvent as HistoryEventInput, HistoryEvent__Output as HistoryEventMessage } from '../generated/wagw/instances/v1/HistoryEvent';
export type { InstancesHandlers } from '../generated/wagw/instances/v1/Instances';
