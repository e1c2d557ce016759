import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local OpenAI-compatible /v1/chat/completions server that enforces a context limit the way OpenAI does:
 * it counts a request's tokens with its own tokenizer (here `charsPerToken` characters a token, stricter
 * than Ratchet's estimate of four) and answers a request over `limit` with OpenAI's real 400
 * `context_length_exceeded` error. Its "model" fetches results r0, r1, ... with the `big_result` tool, one
 * per request, and answers once `results` are fetched; it finds its place from the highest label it can
 * see (in a tool result, or in a summary), so a summarised conversation goes on where it was.
 */
export async function limitedModel(options: {
  limit: number;
  charsPerToken: number;
  results: number;
  size: number;
  /** Whether replies report `usage` (some local servers do not: Ratchet then has only its estimate). */
  reportUsage?: boolean;
  /** Characters of filler after a summary's first line (a model that answers a summary at great length). */
  summaryFiller?: number;
}) {
  const requests: { tokens: number; refused: boolean; summary: boolean }[] = [];
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    request.on('end', () => {
      const body = JSON.parse(text) as {
        messages: { role: string; content?: unknown; tool_calls?: { function: { arguments: string } }[] }[];
        tools?: unknown[];
      };
      const contentText = (content: unknown): string =>
        typeof content === 'string'
          ? content
          : Array.isArray(content)
            ? content.map((part) => (part as { text?: string }).text ?? '').join('')
            : '';
      let chars = body.tools ? JSON.stringify(body.tools).length : 0;
      for (const message of body.messages) {
        chars += contentText(message.content).length + 16;
        for (const call of message.tool_calls ?? []) chars += call.function.arguments.length;
      }
      const tokens = Math.ceil(chars / options.charsPerToken);
      const all = body.messages.map((message) => contentText(message.content)).join('\n');
      const summary = all.includes('You compress the working memory of an agent');
      const refused = tokens > options.limit;
      requests.push({ tokens, refused, summary });
      if (refused) {
        response.writeHead(400, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            error: {
              message: `This model's maximum context length is ${options.limit} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
              type: 'invalid_request_error',
              param: 'messages',
              code: 'context_length_exceeded',
            },
          }),
        );
        return;
      }
      const labels = [...all.matchAll(/\br(\d+):/g)].map((match) => Number(match[1]));
      const next = labels.length === 0 ? 0 : Math.max(...labels) + 1;
      let message: Record<string, unknown>;
      if (summary) {
        const head = `Fetched results r0 to r${next - 1}: each was a block of dots.`;
        const filler = options.summaryFiller ?? 0;
        message = { content: filler > 0 ? `${head} ${'And so on. '.repeat(filler / 11)}` : head };
      } else if (next >= options.results) {
        message = { content: `done: fetched ${options.results} results` };
      } else {
        message = {
          content: null,
          tool_calls: [
            {
              id: `call_${next}`,
              type: 'function',
              function: {
                name: 'big_result',
                arguments: JSON.stringify({ label: `r${next}`, size: options.size }),
              },
            },
          ],
        };
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: `chatcmpl-${requests.length}`,
          object: 'chat.completion',
          created: 1741570283,
          model: 'local-model',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', ...message },
              logprobs: null,
              finish_reason: message.tool_calls ? 'tool_calls' : 'stop',
            },
          ],
          ...(options.reportUsage === false
            ? {}
            : { usage: { prompt_tokens: tokens, completion_tokens: 20, total_tokens: tokens + 20 } }),
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
