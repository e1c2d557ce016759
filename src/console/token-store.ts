// The API token lives in sessionStorage: this tab only, gone when the tab closes, never in a cookie (a
// browser never adds it to a request by itself, so another site's page cannot use it).
const key = 'ratchet.console.token';

export function storedToken(): string | undefined {
  try {
    return sessionStorage.getItem(key) ?? undefined;
  } catch {
    return undefined;
  }
}

export function storeToken(token: string | undefined): void {
  try {
    if (token === undefined) sessionStorage.removeItem(key);
    else sessionStorage.setItem(key, token);
  } catch {
    // Storage refused (a private window's quota): the token lasts until the page is reloaded.
  }
}
