/**
 * The session's task board as the `tasks` toolbox reads and writes it: each task as JSON text by id; the
 * toolbox parses and checks it (task-record.ts). The port the toolbox calls; src/redis implements it
 * (task-create.lua, task-claim.lua, task-update.lua).
 */
export interface TaskStore {
  /** Creates a task once per call key; the stored task's JSON comes back. */
  createTask(
    callKey: string,
    draftJson: string,
    maxTasks: number,
  ): Promise<{ kind: 'created'; id: string; json: string } | { kind: 'full'; tasks: number }>;
  /** Every task's JSON text, by id. */
  allTasks(): Promise<Record<string, string>>;
  /** Claims a pending task; the task's JSON comes back whatever the outcome. */
  claimTask(claim: {
    id: string;
    callKey: string;
    actorJson: string;
    now: string;
  }): Promise<{ kind: 'claimed' | 'taken' | 'not_pending'; json: string } | { kind: 'not_found' }>;
  /** Sets a task's status; the task's JSON comes back whatever the outcome. */
  updateTask(update: {
    id: string;
    status: string;
    note: string;
    actorJson: string;
    runId: string;
    callKey: string;
    now: string;
  }): Promise<{ kind: 'updated' | 'not_yours' | 'not_claimed'; json: string } | { kind: 'not_found' }>;
}
