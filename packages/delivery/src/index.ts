export { BackgroundDispatcher, type BackgroundDispatcherOptions } from './background-dispatcher.js';
export type { DispatchOutcome, DispatchStatus } from './claim-dispatch.js';
export type { DeliveryAdapter, DeliveryReceipt, OutboundDelivery } from './delivery-adapter.js';
export { type DeliveryRecoverReport, DeliveryRuntime, type DeliveryRuntimeOptions } from './delivery-runtime.js';
export {
  DeliveryAdapterError,
  type DeliveryAdapterErrorInit,
  DeliveryFailureCode,
  httpFailureCode,
  RouteSessionMismatchError,
} from './errors.js';
export { createOperatorAdapter, type OperatorAdapter, type OperatorSink } from './operator.adapter.js';
export { deliveryOfWork, type ResolveUnknownDeliveryOptions, resolveUnknownDelivery } from './resolve-unknown.js';
export {
  defaultRetryPolicy,
  defaultUnroutedRetryPolicy,
  type ExponentialBackoffOptions,
  exponentialBackoff,
  type RetryPolicy,
} from './retry-policy.js';
export { SessionInteractionRouter, type SessionRoute } from './session-interaction-router.js';
export { createWebhookAdapter, type WebhookAdapterOptions, type WebhookPayload } from './webhook.adapter.js';
