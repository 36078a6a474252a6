export { createFakeClock, type FakeClock } from './fake-clock.js';
export { DEFAULT_FUZZ_SEED, type FuzzSettings, fuzzSettings } from './fuzz-settings.js';
export { propertySettings } from './property-settings.js';
export { createSeededIdGenerator } from './seeded-ids.js';
export { mutatedDocument, oddValue, yamlText } from './yaml-mutations.js';
