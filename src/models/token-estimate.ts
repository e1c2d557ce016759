/** A rough input-token estimate (about four characters a token) for admission; the reply reconciles it. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
