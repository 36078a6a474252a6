export { type PropertyStoreOptions, type PropertyStores, propertyStores } from './property-stores.js';
export { type StartTestPostgresOptions, startTestPostgres, type TestPostgres } from './test-postgres.js';
export { testPostgresOrSkip } from './test-postgres-or-skip.js';
