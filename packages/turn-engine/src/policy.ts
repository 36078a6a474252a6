import type { EffectClass } from './tool.js';

/** Effect classes plan mode allows without an approval: reading, introspection and planning. */
export const PLAN_MODE_ALLOWED: readonly EffectClass[] = ['read', 'plan'];

export type PolicyDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly policy: string; readonly reason: string };

/** Plan mode is a policy overlay: it decides per effect class, never by hiding tools. */
export function planModeDecision(mode: 'default' | 'plan', tool: string, effect: EffectClass): PolicyDecision {
  if (mode !== 'plan' || PLAN_MODE_ALLOWED.includes(effect)) return { allowed: true };
  return {
    allowed: false,
    policy: 'plan_mode',
    reason:
      `plan mode denies ${effect} effects: ${tool} was not run. To continue: ask the user to approve this exact ` +
      'call (the approval covers this tool with these arguments, once, until it expires), or ask them to leave ' +
      'plan mode; meanwhile keep planning with read-only tools.',
  };
}

/** Canonical JSON of tool arguments (object keys sorted), so an approval matches exactly one call shape. */
export function normalizeArguments(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, sortKeys(v)]),
    );
  }
  return value;
}
