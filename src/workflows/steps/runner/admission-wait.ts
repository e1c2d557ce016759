import type { RunRecord } from '../../run-record.js';
import { awaitsAdmission } from './run-admission.js';
import { park, type StepAction } from './step-action.js';
import type { StepContext } from './step-context.js';

/**
 * The first step of a root run that is not admitted parks, holding no worker, until a freed slot admits it
 * (its step is woken) or its recheck comes; undefined: go on. Child runs never wait (decision 0038). An
 * admitted run whose tenant holds more than its share while another tenant waits yields its slot here, before
 * it has done anything, and parks likewise (decision 0048).
 */
export async function admissionWait(
  context: StepContext,
  record: RunRecord,
): Promise<StepAction | undefined> {
  const admission = context.services.admission;
  if (!admission || !awaitsAdmission(record)) return undefined;
  if (await admission.admit(record, { wakeSelf: false, starting: true })) return undefined;
  context.logger.info({ run_id: record.id, tenant: record.tenant }, 'run queued for admission: step parked');
  return park(context.services.now().getTime() + admission.recheckMs, () => admission.isAdmitted(record.id));
}
