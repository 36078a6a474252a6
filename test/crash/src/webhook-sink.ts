// The counting webhook receiver moved to the CLI with the crash-point sweep's host driver (`demiurge sweep`).
export { type SinkHit, startWebhookSink, type WebhookSink } from '@demiurge/cli';
