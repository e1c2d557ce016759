import type { Run, RunTree, RunTreeNode } from '../../client/index.js';
import { formatCost, formatCount, formatDuration } from '../format.js';
import { runHref } from '../router.js';
import { StatusBadge } from './status-badge.js';
import { Text } from './text.js';

type SubGoal = NonNullable<NonNullable<Run['progress']>['sub_goals']>[number];

const subGoalMark: Record<string, string> = {
  completed: '[✓]',
  in_progress: '[→]',
  pending: '[ ]',
  failed: '[✗]',
};

/**
 * The run and every run below it (delegations, spawns, team turns), nested as lists of links, so the tree
 * is read and walked with the keyboard like any list; the viewed run is marked, with its supervisor's
 * sub-goals. Its status, duration and totals are the API's, as the run's page header shows them. Test ids:
 * run-tree, tree-node-<id> (data-status), tree-node-facts, tree-node-total, sub-goals, sub-goal (data-status).
 */
export function RunTreeView(props: { tree: RunTree; currentRunId: string; subGoals: readonly SubGoal[] }) {
  const { tree, currentRunId, subGoals } = props;
  const children = new Map<string | null, RunTreeNode[]>();
  const known = new Set(tree.runs.map((node) => node.run_id));
  for (const node of tree.runs) {
    // The asked-about run is the root of the answer whatever its parent is.
    const parent =
      node.run_id === tree.run_id || !known.has(node.parent_run_id ?? '') ? null : node.parent_run_id;
    children.set(parent, [...(children.get(parent) ?? []), node]);
  }
  const renderLevel = (parent: string | null) => {
    const nodes = children.get(parent) ?? [];
    if (nodes.length === 0) return null;
    return (
      <ul class={parent === null ? 'tree' : 'tree-children'}>
        {nodes.map((node) => (
          <li key={node.run_id} data-testid={`tree-node-${node.run_id}`} data-status={node.status}>
            <div class="tree-node" aria-current={node.run_id === currentRunId ? 'true' : undefined}>
              <a href={runHref(node.run_id)}>
                <Text value={node.agent} />
              </a>
              <StatusBadge status={node.status} />
              <span class="muted" data-testid="tree-node-facts">
                {formatCount(node.iterations)} it. · {formatCount(node.tokens.input + node.tokens.output)}{' '}
                tok. · {formatCost(node.cost_usd)} · {formatDuration(node.duration_ms)}
              </span>
              {node.children > 0 && (
                <span class="muted" data-testid="tree-node-total">
                  with the runs below: {formatCount(node.total.tokens.input + node.total.tokens.output)} tok.
                  · {formatCost(node.total.cost_usd)}
                </span>
              )}
              {node.error_code !== null && <span class="muted">({node.error_code})</span>}
            </div>
            {node.run_id === currentRunId && subGoals.length > 0 && (
              <ul class="sub-goals" data-testid="sub-goals" aria-label="Sub-goals">
                {subGoals.map((goal) => (
                  <li key={goal.id} data-testid="sub-goal" data-status={goal.status}>
                    {subGoalMark[goal.status] ?? '[?]'} <Text value={goal.title} />
                  </li>
                ))}
              </ul>
            )}
            {renderLevel(node.run_id)}
          </li>
        ))}
      </ul>
    );
  };
  return (
    <div data-testid="run-tree">
      {renderLevel(null)}
      {tree.truncated && (
        <p class="muted">The tree is larger than one answer holds (500 runs): some are not shown.</p>
      )}
    </div>
  );
}
