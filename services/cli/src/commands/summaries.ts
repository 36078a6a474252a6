/** Each projector's checkpoint and the number of documents in each of its collections. */
export { summarizeProjections } from '@demiurge/event-store';
