import { useState } from 'preact/hooks';

export interface TokenFormProps {
  /** A token was sent and the API refused it. */
  refused: boolean;
  onToken: (token: string) => void;
}

/** Asks for one of the API's tokens (`api.tokens`); the shell keeps it for this tab only. */
export function TokenForm({ refused, onToken }: TokenFormProps) {
  const [value, setValue] = useState('');
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    const token = value.trim();
    if (token !== '') onToken(token);
  };
  return (
    <section class="token-panel" aria-labelledby="token-heading">
      <h1 id="token-heading">API token</h1>
      <p>
        This API needs a token (one of <code>api.tokens</code> in its config). It is kept for this tab only
        and sent with each call the console makes.
      </p>
      {refused && (
        <p class="error" role="alert" data-testid="token-refused">
          The API refused the token.
        </p>
      )}
      <form onSubmit={submit} data-testid="token-form">
        <label for="token-input">Token</label>
        <input
          id="token-input"
          type="password"
          autocomplete="off"
          value={value}
          onInput={(event) => setValue(event.currentTarget.value)}
          data-testid="token-input"
        />
        <button type="submit" data-testid="token-submit">
          Use token
        </button>
      </form>
    </section>
  );
}
