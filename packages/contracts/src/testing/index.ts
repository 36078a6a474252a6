export { createFakeClock, type FakeClock } from './fake-clock.js';
export { propertySettings } from './property-settings.js';
export { createSeededIdGenerator } from './seeded-ids.js';
