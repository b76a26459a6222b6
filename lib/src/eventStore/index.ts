export * from './port';
export { JetStreamEventStore, type JetStreamEventStoreOptions } from './jetstreamEventStore';
export { InMemoryEventStore } from './inMemoryEventStore';
export * from './commandHandler';
export * from './projection';
export { decodeCommit, encodeCommit } from './codec';
export { DeciderSpecification, type DeciderGiven, type DeciderWhen } from './deciderSpecification';
export { StoreSpecification, type ExpectedCommit, type GivenCommit, type Outcome } from './specification';
