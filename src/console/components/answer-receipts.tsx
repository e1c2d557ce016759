import { useState } from 'preact/hooks';
import type { Question, QuestionResponse } from '../../client/index.js';
import { runHref } from '../router.js';
import { visibleText } from './text.js';

/** What was sent, in words: the answer (cut), the approval's decision, or the budget's. */
export function describeResponse(question: Question, response: QuestionResponse): string {
  const tool = question.tool?.name === undefined ? '' : ` ${question.tool.name}`;
  if (typeof response !== 'string') {
    if (response.decision === 'reject')
      return `rejected${tool}${response.reason === undefined ? '' : `: “${cut(response.reason)}”`}`;
    return `approved${tool}${response.arguments === undefined ? '' : ' with edited arguments'}`;
  }
  if (question.kind === 'approval') return `${response === 'approve' ? 'approved' : 'rejected'}${tool}`;
  if (question.kind === 'budget') return response === 'raise' ? 'raised the budget' : 'stopped the run';
  return `answered “${cut(response)}”`;
}

function cut(text: string): string {
  const characters = [...text];
  return characters.length <= 80 ? text : `${characters.slice(0, 79).join('')}…`;
}

interface Receipt {
  id: string;
  runId: string;
  what: string;
  at: string;
}

/** The answers sent from this page, newest first, kept while the page is open (the questions leave its list). */
export function useAnswerReceipts() {
  const [receipts, setReceipts] = useState<Receipt[]>([]);
  const add = (question: Question, response: QuestionResponse) =>
    setReceipts((list) =>
      [
        {
          id: question.id,
          runId: question.run_id,
          what: describeResponse(question, response),
          at: new Date().toLocaleTimeString(),
        },
        ...list.filter((receipt) => receipt.id !== question.id),
      ].slice(0, 5),
    );
  return { receipts, add };
}

/**
 * The confirmation of each answer sent: the question has left the list once the API took the answer, so this
 * says that it went, what it said and which run goes on. A live region: a screen reader reads it out.
 * Test ids: answer-receipts, answer-receipt (data-question-id).
 */
export function AnswerReceipts({ receipts }: { receipts: ReturnType<typeof useAnswerReceipts>['receipts'] }) {
  return (
    <div role="status" aria-live="polite" data-testid="answer-receipts">
      {receipts.length > 0 && (
        <ul class="receipts">
          {receipts.map((receipt) => (
            <li key={receipt.id} class="receipt" data-testid="answer-receipt" data-question-id={receipt.id}>
              ✓ Sent at {receipt.at}: {visibleText(receipt.what)}. Run{' '}
              <a href={runHref(receipt.runId)} class="mono">
                {receipt.runId}
              </a>{' '}
              goes on.
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
