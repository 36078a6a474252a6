// The seed invariants live in the test kit (the simulator checks them after every step); `verify` reads them from there.
export { checkInvariants, Invariant, type InvariantFinding } from '@demiurge/testkit';
