export { type StartTestPostgresOptions, startTestPostgres, type TestPostgres } from './test-postgres.js';
export { testPostgresOrSkip } from './test-postgres-or-skip.js';
