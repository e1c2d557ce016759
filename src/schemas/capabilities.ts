import { z } from 'zod';

/**
 * What a worker advertises it can serve, in its heartbeat record (decision 0031): names by kind. A shape
 * shared by the worker registry, the pure core's needs (core/step-needs.ts) and GET /v1/system.
 */
export const capabilityKinds = [
  'agents',
  'providers',
  'toolboxes',
  'tools',
  'effects',
  'middleware',
  'coordinators',
  'stop_conditions',
  'mcp_servers',
  /** Contract rule kinds written in code (`defineContractRule`, decision 0049). */
  'contract_rules',
] as const;
export type CapabilityKind = (typeof capabilityKinds)[number];

/**
 * The bounds of what a worker advertises (its heartbeat record is read by every worker, every look): names
 * per kind and characters per name; and the most missing names a waiting run records.
 */
export const capabilityLimits = { maxNamesPerKind: 2_000, maxNameChars: 200, maxMissingNames: 50 } as const;

/** Every name a worker serves, by kind. Version 1 (inside the registry entry, which carries the version). */
export const capabilitiesSchema = z.strictObject(
  Object.fromEntries(
    capabilityKinds.map((kind) => [
      kind,
      z.array(z.string().max(capabilityLimits.maxNameChars)).max(capabilityLimits.maxNamesPerKind),
    ]),
  ) as { [Kind in CapabilityKind]: z.ZodArray<z.ZodString> },
);
