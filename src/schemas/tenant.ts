import { z } from 'zod';

/**
 * Tenants (issue 35, decision 0035): every run and session belongs to one, named by a client on submit, by
 * its scoped API token, or `default`. Its name ends up in Redis keys and logs, so it is short and plain.
 */
export const defaultTenant = 'default';

/** The most characters of a tenant's name. */
export const maxTenantNameChars = 64;

export const tenantNamePattern = /^[a-z0-9][a-z0-9_-]*$/;

export const tenantNameSchema = z
  .string()
  .min(1)
  .max(maxTenantNameChars, { error: `must be at most ${maxTenantNameChars} characters` })
  .regex(tenantNamePattern, {
    error: 'must be lower-case letters, digits, "_" or "-", starting with a letter or a digit',
  });

/** A run's priority within its tenant: 1 (lowest) to 10 (highest). */
export const minRunPriority = 1;
export const maxRunPriority = 10;
export const defaultRunPriority = 5;

export const runPrioritySchema = z
  .int()
  .min(minRunPriority, { error: `must be ${minRunPriority} to ${maxRunPriority}` })
  .max(maxRunPriority, { error: `must be ${minRunPriority} to ${maxRunPriority}` });
