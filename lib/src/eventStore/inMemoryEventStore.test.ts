import { InMemoryEventStore } from './inMemoryEventStore';
import { describeEventStoreContract } from '../../../test/contract/eventStore.contract';

describeEventStoreContract('in-memory', async () => ({ store: new InMemoryEventStore(), close: async () => undefined }));
