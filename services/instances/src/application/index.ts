export * from './instanceDirectory';
export * from './instancesService';
export type { HistoryFilters } from './historyQuery';
