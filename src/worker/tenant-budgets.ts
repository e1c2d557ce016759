import type { TenantSettings } from '../config/index.js';
import type { TenantBudgets } from '../workflows/index.js';

/**
 * The tenants' token budgets of a config (`tenants.<name>.tokens_per_minute`, `default` for the tenants not
 * named; decision 0038), or undefined when no tenant has one.
 */
export function tenantBudgetsOf(
  tenants: Readonly<Record<string, TenantSettings>>,
): TenantBudgets | undefined {
  if (!Object.values(tenants).some((tenant) => tenant.tokens_per_minute !== undefined)) return undefined;
  return (tenant) => {
    const settings = Object.hasOwn(tenants, tenant) ? tenants[tenant] : tenants.default;
    return settings?.tokens_per_minute;
  };
}
