export { type StartTestPostgresOptions, startTestPostgres, type TestPostgres } from './test-postgres.js';
