import {
  type AdmissionCandidate,
  crashPoint,
  type QueuedReason,
  type RunAdmission,
} from '../workflows/index.js';
import type { RedisClient } from './connection.js';
import { admissionKeys, type KeySpace } from './keys.js';
import { runScript } from './scripts.js';

/**
 * Fair admission of root runs across tenants (decision 0038), kept by the admission scripts
 * (admission-admit.lua, admission-release.lua) under one hash tag for the deployment.
 */

/** What admission enforces, from the config's `admission:` and `tenants:`. */
export interface AdmissionPolicy {
  /** Root runs of every tenant admitted at once; 0: no cap. */
  cap: number;
  /** Per tenant (`default` for the rest): [max_active_runs (0: none), weight]. */
  tenants: Record<string, [number, number]>;
  recheckMs: number;
}

/** The tenant settings admission reads (config `tenants.<name>`). */
interface TenantLimits {
  max_active_runs?: number | undefined;
  weight: number;
  /** Not admission's (a token budget, decision 0038): read by the steps' limiter. */
  tokens_per_minute?: number | undefined;
}

/**
 * The policy of a config, or undefined when nothing limits admission (no cap and no tenant's
 * max_active_runs): then runs start at once, untracked, as before fair admission.
 */
export function admissionPolicyOf(config: {
  admission: { max_active_runs?: number | undefined; recheck_s: number };
  tenants: Record<string, TenantLimits>;
}): AdmissionPolicy | undefined {
  const cap = config.admission.max_active_runs ?? 0;
  const limited = Object.values(config.tenants).some((tenant) => tenant.max_active_runs !== undefined);
  if (cap === 0 && !limited) return undefined;
  return {
    cap,
    tenants: Object.fromEntries(
      Object.entries(config.tenants).map(([name, tenant]) => [
        name,
        [tenant.max_active_runs ?? 0, tenant.weight],
      ]),
    ),
    recheckMs: config.admission.recheck_s * 1000,
  };
}

/** The most runs one script call admits (a burst of freed slots is filled over several calls). */
const admitBound = 100;

/** The queue score of a run: highest priority first, then oldest (priority 1..10, ms since the epoch). */
export function admissionScore(run: Pick<AdmissionCandidate, 'priority' | 'created_at'>): number {
  return (11 - run.priority) * 1e13 + Date.parse(run.created_at);
}

export class RedisRunAdmission implements RunAdmission {
  readonly recheckMs: number;

  constructor(
    private readonly options: {
      redis: RedisClient;
      space: KeySpace;
      policy: AdmissionPolicy;
      /** Wakes a run's parked first step. */
      wake: (runId: string) => Promise<void>;
    },
  ) {
    this.recheckMs = options.policy.recheckMs;
  }

  async admit(
    run: AdmissionCandidate,
    options: { wakeSelf?: boolean; starting?: boolean } = {},
  ): Promise<boolean> {
    const { policy, space, redis } = this.options;
    const keys = admissionKeys(space);
    const [code, ...admitted] = await runScript(
      redis,
      'admission-admit',
      [keys.active, keys.counts, keys.vtime, keys.waiting, keys.queueBase + run.tenant],
      [
        run.id,
        run.tenant,
        admissionScore(run),
        policy.cap,
        JSON.stringify(policy.tenants),
        keys.queueBase,
        admitBound,
        options.starting === true ? '1' : '0',
      ],
    );
    crashPoint('admission.after_admit');
    await this.wakeAll(options.wakeSelf === false ? admitted.filter((id) => id !== run.id) : admitted);
    return code === 'ADMITTED';
  }

  async isAdmitted(runId: string): Promise<boolean> {
    return (await this.options.redis.hexists(admissionKeys(this.options.space).active, runId)) === 1;
  }

  async release(run: { id: string; tenant: string }): Promise<void> {
    const { policy, space, redis } = this.options;
    const keys = admissionKeys(space);
    const [, ...admitted] = await runScript(
      redis,
      'admission-release',
      [keys.active, keys.counts, keys.vtime, keys.waiting, keys.queueBase + run.tenant],
      [run.id, run.tenant, policy.cap, JSON.stringify(policy.tenants), keys.queueBase, admitBound],
    );
    crashPoint('admission.after_release');
    await this.wakeAll(admitted);
  }

  /**
   * Frees the slots of runs removed from the store (retention), when they hold one: a finished run's end freed
   * it already unless its process died first; then this frees it now rather than at the next sweep (decision
   * 0048). One read of the admitted runs, and a release only for those still admitted.
   */
  async releaseRemoved(runIds: readonly string[]): Promise<number> {
    if (runIds.length === 0) return 0;
    const tenants = await this.options.redis.hmget(admissionKeys(this.options.space).active, ...runIds);
    const held = runIds.flatMap((id, index) => {
      const tenant = tenants[index];
      return tenant ? [{ id, tenant }] : [];
    });
    for (const run of held) await this.release(run);
    return held.length;
  }

  /** The runs admitted now: each run's id and tenant (the sweep looks at whether each has ended). */
  async activeRuns(): Promise<{ id: string; tenant: string }[]> {
    const entries = await this.options.redis.hgetall(admissionKeys(this.options.space).active);
    return Object.entries(entries).map(([id, tenant]) => ({ id, tenant }));
  }

  /** Takes the sweep for `ms` (SET NX): false when another process holds it. */
  async holdSweep(ms: number): Promise<boolean> {
    const key = admissionKeys(this.options.space).sweepLock;
    return (await this.options.redis.set(key, String(process.pid), 'PX', ms, 'NX')) === 'OK';
  }

  async releaseSweep(): Promise<void> {
    await this.options.redis.del(admissionKeys(this.options.space).sweepLock);
  }

  /** Why each queued run of the list waits; runs not queued for admission are not in the answer. */
  async queuedReasons(runs: readonly { id: string; tenant: string }[]): Promise<Map<string, QueuedReason>> {
    const reasons = new Map<string, QueuedReason>();
    if (runs.length === 0) return reasons;
    const { redis, space, policy } = this.options;
    const keys = admissionKeys(space);
    const pipeline = redis.pipeline().hlen(keys.active);
    for (const run of runs) pipeline.zrank(keys.queueBase + run.tenant, run.id).hget(keys.counts, run.tenant);
    const replies = ((await pipeline.exec()) ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    });
    const total = Number(replies[0] ?? 0);
    runs.forEach((run, index) => {
      const rank = replies[1 + index * 2];
      if (rank === null || rank === undefined) return;
      const active = Number(replies[2 + index * 2] ?? 0);
      const [tenantMax = 0] =
        (Object.hasOwn(policy.tenants, run.tenant) ? policy.tenants[run.tenant] : policy.tenants.default) ??
        [];
      const atTenantLimit = tenantMax > 0 && active >= tenantMax;
      reasons.set(run.id, {
        reason: atTenantLimit ? 'tenant_limit' : 'deployment_limit',
        message: atTenantLimit
          ? `tenant ${run.tenant} has ${active} of its ${tenantMax} active runs (max_active_runs); ${Number(rank)} of its runs are ahead of this one`
          : `the deployment has ${total} of its ${policy.cap} active runs (admission.max_active_runs); admitted by fair share across tenants, ${Number(rank)} runs of tenant ${run.tenant} ahead of this one`,
        ahead: Number(rank),
      });
    });
    return reasons;
  }

  private async wakeAll(runIds: readonly string[]): Promise<void> {
    await Promise.all(runIds.map((runId) => this.options.wake(runId)));
  }
}
