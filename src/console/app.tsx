import type { ComponentType } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { RatchetClient } from '../client/index.js';
import { TokenForm } from './components/token-form.js';
import type { PageProps } from './page-props.js';
import { InboxPage } from './pages/inbox-page.js';
import { RunPage } from './pages/run-page.js';
import { RunsPage } from './pages/runs-page.js';
import { SchedulesPage } from './pages/schedules-page.js';
import { SessionPage } from './pages/session-page.js';
import { SystemPage } from './pages/system-page.js';
import { WebhooksPage } from './pages/webhooks-page.js';
import { parseRoute, type Route } from './router.js';
import { storedToken, storeToken } from './token-store.js';

function NotFoundPage() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        This console has no such page. <a href="#/runs">See the runs</a>.
      </p>
    </section>
  );
}

const pages: Record<Route['page'], ComponentType<PageProps>> = {
  runs: RunsPage,
  run: RunPage,
  inbox: InboxPage,
  session: SessionPage,
  system: SystemPage,
  webhooks: WebhooksPage,
  schedules: SchedulesPage,
  not_found: NotFoundPage,
};

/** Which nav entry a page belongs to. */
const section: Record<Route['page'], 'runs' | 'inbox' | 'schedules' | 'system' | 'webhooks' | undefined> = {
  runs: 'runs',
  run: 'runs',
  session: 'runs',
  inbox: 'inbox',
  system: 'system',
  webhooks: 'webhooks',
  schedules: 'schedules',
  not_found: undefined,
};

const navEntries = [
  { section: 'runs', label: 'Runs' },
  { section: 'inbox', label: 'Inbox' },
  { section: 'schedules', label: 'Schedules' },
  { section: 'system', label: 'System' },
  { section: 'webhooks', label: 'Webhooks' },
] as const;

/**
 * The console's shell: header and nav, the hash router, and the token. A call answered 401 shows the token
 * form; the token is kept in sessionStorage and given to the client, which sends it with every call.
 */
export function App() {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  const [token, setToken] = useState(storedToken);
  const [unauthorized, setUnauthorized] = useState(false);

  useEffect(() => {
    const onHashChange = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onHashChange);
    return () => removeEventListener('hashchange', onHashChange);
  }, []);

  const client = useMemo(() => {
    const watched: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (response.status === 401) setUnauthorized(true);
      return response;
    };
    return new RatchetClient({
      baseUrl: location.origin,
      fetch: watched,
      ...(token === undefined ? {} : { token }),
    });
  }, [token]);

  const useToken = (next: string) => {
    storeToken(next);
    setToken(next);
    setUnauthorized(false);
  };
  const forgetToken = () => {
    storeToken(undefined);
    setToken(undefined);
  };

  const Page = pages[route.page];
  const current = section[route.page];
  return (
    <>
      <button type="button" class="skip-link" onClick={skipToMain}>
        Skip to content
      </button>
      <header class="top-bar">
        <a class="brand" href="#/runs">
          Ratchet
        </a>
        <nav aria-label="Console">
          <ul>
            {navEntries.map((entry) => (
              <li key={entry.section}>
                <a
                  href={`#/${entry.section}`}
                  aria-current={current === entry.section ? 'page' : undefined}
                  data-testid={`nav-${entry.section}`}
                >
                  {entry.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        {token !== undefined && (
          <button type="button" class="link-button" onClick={forgetToken} data-testid="forget-token">
            Forget token
          </button>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        {unauthorized ? (
          <TokenForm refused={token !== undefined} onToken={useToken} />
        ) : (
          <Page
            key={`${route.page}:${route.params.id ?? ''}:${token ?? ''}`}
            client={client}
            params={route.params}
          />
        )}
      </main>
    </>
  );
}

/** The skip link moves focus to <main>; a button, since the hash is the router's. */
function skipToMain() {
  document.getElementById('main')?.focus();
}
