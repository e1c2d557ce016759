import { describe, expect, it } from 'vitest';
import { admissionScore } from '../../src/redis/run-admission.js';
import { tenantBudgetsOf } from '../../src/worker/tenant-budgets.js';
import type { RunRecord } from '../../src/workflows/index.js';
import { awaitsAdmission } from '../../src/workflows/index.js';

/** The pure parts of fair admission and token budgets (decision 0038). */

function record(fields: Partial<RunRecord>): RunRecord {
  return { status: 'queued', parent: null, ...fields } as RunRecord;
}

describe('fair admission', () => {
  it('asks only for a root run that has not started: a child run never waits for admission', () => {
    expect(awaitsAdmission(record({}))).toBe(true);
    expect(awaitsAdmission(record({ parent: { run_id: 'run_p', job_id: 'run_p-i1-t0', depth: 1 } }))).toBe(
      false,
    );
    expect(awaitsAdmission(record({ status: 'running' }))).toBe(false);
    expect(awaitsAdmission(record({ status: 'cancelled' }))).toBe(false);
  });

  it("orders a tenant's queue by priority, then age", () => {
    const urgentButYoung = admissionScore({ priority: 9, created_at: '2026-12-06T10:00:00.000Z' });
    const old = admissionScore({ priority: 5, created_at: '2026-12-06T08:00:00.000Z' });
    const young = admissionScore({ priority: 5, created_at: '2026-12-06T09:00:00.000Z' });
    expect(urgentButYoung).toBeLessThan(old);
    expect(old).toBeLessThan(young);
    // Exact in a double for any date this side of the year 2286.
    expect(
      Number.isSafeInteger(admissionScore({ priority: 1, created_at: '2286-01-01T00:00:00.000Z' })),
    ).toBe(true);
  });
});

describe('token budgets', () => {
  it("reads a tenant's tokens_per_minute, `default`'s for tenants not named, none when no tenant has one", () => {
    const budgets = tenantBudgetsOf({
      acme: { weight: 1, tokens_per_minute: 500 },
      default: { weight: 1, tokens_per_minute: 100 },
      free: { weight: 1 },
    });
    expect(budgets?.('acme')).toBe(500);
    expect(budgets?.('someone')).toBe(100);
    expect(budgets?.('free')).toBeUndefined();
    // A tenant named like an Object property is a tenant, not the prototype's.
    expect(budgets?.('constructor')).toBe(100);
    expect(tenantBudgetsOf({ acme: { weight: 2, max_active_runs: 3 } })).toBeUndefined();
  });
});
