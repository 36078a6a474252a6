// The chain is shared by every store adapter: @demiurge/event-store/adapter.
export {
  type ChainBreak,
  type ChainedRow,
  type ChainHead,
  type ChainReport,
  ChainWalker,
  compareKept,
  eventHash,
  eventHashHex,
  GENESIS_HASH,
  walkChain,
} from '@demiurge/event-store/adapter';
