export {
  CLAIMABLE_STATUSES,
  type ClaimableEntry,
  claimableByKindKey,
  claimableByKindPrefix,
  claimableKey,
  isClaimable,
  isLeased,
  LEASED_STATUSES,
  type LeaseEntry,
  leaseKey,
  type WorkError,
  WorkItemCollections,
  type WorkItemStatus,
  type WorkItemView,
} from './work-item.view.js';
export { workItemsProjector } from './work-items.projector.js';
export { type WorkItemsReader, workItemsReader } from './work-items.reader.js';
