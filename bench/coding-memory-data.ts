/**
 * The coding-memory benchmark's data, written for cairn and public with it: what four repositories' agents
 * would keep (decisions, constraints, conventions, gotchas, routes, task notes, facts) and what their agents
 * would ask. Each note may carry the queries it answers; a key `subject@n` makes note n of an update chain
 * on `subject` (no supersede link: the newer note is written in its own words, as an agent would), and the
 * newest version is the answer to the chain's queries. `state` marks notes forgotten or expired before the
 * queries run: a query attached to such a note has no answer, and returning that note is a leak.
 * Off-topic queries (per namespace) have no answer at all. Dev/test halves: bench/coding-memory.ts.
 */
import type { MemoryKind } from '../src/interfaces/memory.js';

export const QUERY_TYPES = ['paraphrase', 'identifier', 'path', 'error-code', 'update', 'forgotten', 'expired', 'cross-namespace', 'off-topic'] as const;
export type QueryType = (typeof QUERY_TYPES)[number];

export interface NoteSpec {
  key: string;
  kind: MemoryKind;
  /** Age at query time, in days. */
  days: number;
  text: string;
  state?: 'forgotten' | 'expired';
  q?: [QueryType, string][];
  route?: { title: string; paths: string[] };
}

export interface NamespaceSpec {
  namespace: string;
  notes: NoteSpec[];
  offTopic: string[];
}

type Q = [QueryType, string][];
const n = (key: string, kind: MemoryKind, days: number, text: string, q?: Q, state?: NoteSpec['state']): NoteSpec => ({
  key,
  kind,
  days,
  text,
  ...(q ? { q } : {}),
  ...(state ? { state } : {}),
});
const route = (key: string, days: number, title: string, text: string, paths: string[], q?: Q): NoteSpec => ({
  key,
  kind: 'route',
  days,
  text,
  route: { title, paths },
  ...(q ? { q } : {}),
});

const billing: NamespaceSpec = {
  namespace: 'github.com/acme/billing-api',
  notes: [
    n('vat-rounding', 'decision', 60, 'Decision: VAT is rounded half-up to two decimals on each invoice line, never on the invoice total, to match what the accountants file.', [
      ['paraphrase', 'how do we round tax'],
      ['paraphrase', 'is sales tax rounded per line or on the total'],
    ]),
    n('tax-provider', 'fact', 20, 'Tax rates come from the Avalara provider through TaxProviderClient in src/tax/provider.ts; rates are cached for an hour.', [
      ['identifier', 'TaxProviderClient'],
      ['paraphrase', 'where do tax rates come from'],
    ]),
    n('money-minor-units', 'decision', 200, 'Money is stored as integer minor units (cents) in bigint columns; floats are never used for currency amounts.', [
      ['paraphrase', 'what type should I use for prices in the database'],
    ]),
    n('idempotency-header', 'convention', 150, 'Every POST to /v1/charges must carry an Idempotency-Key header; src/http/idempotency.ts answers a repeated key with the first response.', [
      ['path', 'src/http/idempotency.ts'],
      ['paraphrase', 'how do we stop a charge being created twice when the client retries'],
    ]),
    n('ledger-imbalance', 'gotcha', 45, 'E_LEDGER_IMBALANCE means the debit and credit legs of a journal entry do not sum to zero; it is usually a refund posted without its fee reversal.', [
      ['error-code', 'E_LEDGER_IMBALANCE'],
      ['paraphrase', 'journal entry legs do not add up to zero'],
    ]),
    n('stripe-signature', 'gotcha', 90, 'Stripe webhooks fail with ERR_STRIPE_SIGNATURE when the body was parsed as JSON before verification; the webhook route must read the raw body.', [
      ['error-code', 'ERR_STRIPE_SIGNATURE'],
      ['paraphrase', 'webhook signature check keeps failing'],
    ]),
    n('pg-deadlock', 'gotcha', 70, 'Postgres error 40P01 (deadlock detected) shows up when two invoice finalisations lock customer rows in different orders; lock rows ordered by id.', [
      ['error-code', '40P01 deadlock detected'],
    ]),
    n('invoice-finalizer', 'fact', 33, 'InvoiceFinalizer runs every five minutes from src/jobs/finalize-invoices.ts and moves draft invoices older than one hour to open.', [
      ['identifier', 'InvoiceFinalizer'],
      ['path', 'src/jobs/finalize-invoices.ts'],
    ]),
    n('use-ledger-tx', 'convention', 110, 'Use useLedgerTx() for any write that touches ledger tables; it opens a SERIALIZABLE transaction and retries serialization failures three times.', [
      ['identifier', 'useLedgerTx'],
      ['paraphrase', 'which helper wraps ledger writes in a transaction'],
    ]),
    n('retry-budget', 'constraint', 80, 'RETRY_BUDGET_MS caps the total time spent retrying a payment provider call at 8000 ms so the API stays under its 10 s gateway timeout.', [
      ['identifier', 'RETRY_BUDGET_MS'],
    ]),
    n('no-pii-logs', 'constraint', 300, 'Card numbers, CVCs and full billing addresses must never reach the logs; the logger in src/lib/log.ts masks fields listed in PII_FIELDS.', [
      ['paraphrase', 'can I log the customer address'],
      ['identifier', 'PII_FIELDS'],
    ]),
    n('currency-list', 'fact', 140, 'Supported currencies are EUR, GBP, USD and SEK; adding one needs a row in currencies and a rounding rule in src/money/rules.ts.', [
      ['paraphrase', 'which currencies can customers pay in'],
    ]),
    n('test-db', 'convention', 95, 'Integration tests run against a throwaway Postgres started by scripts/test-db.sh on port 54329; never point tests at the shared staging database.', [
      ['path', 'scripts/test-db.sh'],
      ['paraphrase', 'what database do the integration tests use'],
    ]),
    n('migration-naming', 'convention', 210, 'Migrations live in migrations/ and are named YYYYMMDDHHMM_verb_object.sql; each has a matching down file.', [
      ['paraphrase', 'how should I name a new schema migration'],
    ]),
    n('refund-window', 'constraint', 120, 'Refunds are allowed up to 180 days after the charge; beyond that the card networks reject them with code R180.', [
      ['error-code', 'R180'],
      ['paraphrase', 'how long after a payment can we still refund it'],
    ]),
    n('proration', 'decision', 55, 'Plan changes mid-cycle are prorated to the second and the difference is added to the next invoice rather than charged immediately.', [
      ['paraphrase', 'what happens to the bill when someone upgrades their plan halfway through the month'],
    ]),
    n('dunning', 'fact', 65, 'Failed renewals retry on days 1, 3, 5 and 7 (the dunning schedule in src/dunning/schedule.ts) before the subscription is paused.', [
      ['path', 'src/dunning/schedule.ts'],
      ['paraphrase', 'when do we retry a card that was declined on renewal'],
    ]),
    n('fx-rates', 'gotcha', 38, 'FX rates from the ECB feed are published around 16:00 CET; conversions before that use the previous day and reports can differ by a cent.', [
      ['paraphrase', 'why do currency conversions differ by a cent in the morning'],
    ]),
    n('coupon-stacking', 'decision', 100, 'Only one coupon applies per invoice; when a customer has two, the larger discount wins. Stacking was rejected because it broke margin reports.', [
      ['paraphrase', 'can two discount codes be combined'],
    ]),
    n('webhook-route', 'fact', 75, 'Provider webhooks enter at POST /webhooks/:provider, handled in src/http/webhooks.ts, which enqueues them on the billing-events queue.', [
      ['path', 'src/http/webhooks.ts'],
    ]),
    route('route-tax', 40, 'Tax calculation', 'Tax code: rate lookup, rounding and exemptions.', ['src/tax/', 'src/tax/round.ts', 'src/tax/provider.ts'], [
      ['path', 'src/tax/'],
    ]),
    route('route-ledger', 40, 'Ledger', 'Double-entry ledger: journal entries, balances, reconciliation jobs.', ['src/ledger/', 'src/jobs/reconcile.ts'], [
      ['paraphrase', 'where is the double-entry bookkeeping code'],
    ]),
    route('route-jobs', 40, 'Background jobs', 'Scheduled jobs and their cron entries.', ['src/jobs/', 'deploy/cron.yaml'], []),
    n('task-bill-812', 'note', 6, 'Task BILL-812: the annual plan invoice shows the monthly price on the PDF; the template in templates/invoice.hbs reads plan.monthlyAmount.', [
      ['identifier', 'BILL-812'],
      ['path', 'templates/invoice.hbs'],
    ]),
    n('task-bill-790', 'note', 12, 'Task BILL-790: add SEK support; rounding rule done, still missing the currencies seed row and the PDF formatter.', [
      ['identifier', 'BILL-790'],
    ]),
    n('pdf-renderer', 'fact', 130, 'Invoice PDFs are rendered by a headless Chromium worker (services/pdf) from Handlebars templates; a render takes about 900 ms.', [
      ['paraphrase', 'how are invoice pdfs produced'],
    ]),
    n('node-version', 'fact', 25, 'billing-api runs on Node 20 LTS; the Docker image is node:20-bookworm-slim.', [
      ['cross-namespace', 'which node version does this service run on'],
    ]),
    n('lint-cmd', 'convention', 160, 'Run npm run lint:fix before pushing; CI fails on any eslint warning in src/.', [
      ['paraphrase', 'how do I fix lint errors before a push'],
    ]),
    n('customer-id-format', 'convention', 190, 'Customer ids are prefixed cus_ and generated with ulid; never expose the numeric primary key in an API response.', [
      ['paraphrase', 'what do customer identifiers look like'],
    ]),
    n('price-cache', 'gotcha', 28, 'The price cache is keyed by plan id only, so a price change needs POST /admin/cache/prices/flush or customers see the old price for an hour.', [
      ['paraphrase', 'changed a price but customers still see the old one'],
    ]),
    n('oncall', 'fact', 18, 'Billing on-call rotates weekly on Mondays; the rota is in PagerDuty service BILLING-PRIMARY.', [
      ['identifier', 'BILLING-PRIMARY'],
    ]),
    n('stripe-api-version', 'constraint', 85, 'The Stripe API version is pinned to 2024-06-20 in src/providers/stripe.ts; upgrading needs the webhook payload tests updated first.', [
      ['paraphrase', 'which stripe api version are we pinned to'],
    ]),
    n('credit-notes', 'decision', 105, 'Corrections to a finalised invoice are made with a credit note, never by editing the invoice; finalised invoices are immutable.', [
      ['paraphrase', 'can I edit an invoice after it was sent'],
    ]),
    n('deploy-day@1', 'convention', 170, 'Deploys go out on Thursdays after the 14:00 change freeze lifts.', []),
    n('deploy-day@2', 'convention', 30, 'We moved releases: production deploys now happen every Tuesday morning, and Thursday is no longer a release day.', [
      ['update', 'what day do deploys go out'],
      ['update', 'when is the weekly release'],
    ]),
    n('payment-provider@1', 'decision', 260, 'Card payments are processed by Adyen.', []),
    n('payment-provider@2', 'decision', 90, 'We switched card processing from Adyen to Stripe for all new customers in Q3.', [
      ['update', 'which payment processor handles cards'],
    ]),
    n('invoice-numbering@1', 'convention', 240, 'Invoice numbers are sequential per year: INV-2025-000123.', []),
    n('invoice-numbering@2', 'convention', 120, 'Invoice numbers are now sequential per legal entity and year, e.g. INV-SE-2026-000123, because Sweden needs its own series.', []),
    n('invoice-numbering@3', 'convention', 15, 'Invoice numbering changed again: one gap-free series per legal entity with no year in it (INV-SE-0004312); the yearly reset confused auditors.', [
      ['update', 'what format do invoice numbers use'],
    ]),
    n('grace-period@1', 'constraint', 150, 'Unpaid subscriptions are cancelled after a 14 day grace period.', []),
    n('grace-period@2', 'constraint', 22, 'The grace period for unpaid subscriptions is 30 days now (was 14); accounts are paused, not cancelled, when it ends.', [
      ['update', 'how long is the grace period before an unpaid subscription is cancelled'],
    ]),
    n('tax-cache-ttl@1', 'fact', 180, 'Tax rates from the provider are cached for 24 hours in Redis.', []),
    n('tax-cache-ttl@2', 'fact', 20, 'We cut the tax rate cache to one hour after the July rate change was missed for a day.', [
      ['update', 'how long are tax rates cached'],
    ]),
    n('reports-db@1', 'fact', 200, 'Finance reports query the primary Postgres directly.', []),
    n('reports-db@2', 'decision', 40, 'Finance reports must read from the analytics replica (reports-replica.internal); running them on the primary caused lock waits during month end.', [
      ['update', 'which database should finance reports run against'],
    ]),
    n('min-charge@1', 'constraint', 220, 'The smallest charge we accept is 0.50 in any currency.', []),
    n('min-charge@2', 'constraint', 50, 'Minimum charge amounts are per currency now: 0.50 EUR/USD/GBP and 3 SEK, matching the provider minimums.', [
      ['update', 'what is the smallest amount we can charge'],
    ]),
    n('legacy-endpoint', 'note', 100, 'The /v0/invoices endpoint is still called by the partner portal; do not delete it yet.', [['forgotten', 'is the v0 invoices endpoint still in use']], 'forgotten'),
    n('staging-freeze', 'note', 20, 'Staging is frozen for the auditors until the end of the month: no deploys to staging.', [['expired', 'can I deploy to staging right now']], 'expired'),
    n('wrong-rounding', 'note', 58, 'VAT is rounded on the invoice total.', [], 'forgotten'),
    n('sandbox-keys', 'fact', 130, 'Sandbox credentials for every provider are in the 1Password vault Billing-Dev; ask in #billing for access.', [
      ['paraphrase', 'where do I get test credentials for the payment providers'],
    ]),
    n('rate-limit', 'constraint', 70, 'The public API allows 100 requests per second per account; the limiter answers 429 with Retry-After.', [
      ['error-code', '429 Retry-After'],
      ['paraphrase', 'how many requests per second can an account make'],
    ]),
    n('feature-flags', 'convention', 145, 'Feature flags are read through flags.isOn(name, account) from src/lib/flags.ts; flags older than 90 days get a cleanup ticket.', [
      ['identifier', 'flags.isOn'],
    ]),
    n('queue-name', 'fact', 75, 'Billing events go through the SQS queue billing-events; a dead-letter queue billing-events-dlq keeps failures for 14 days.', [
      ['identifier', 'billing-events-dlq'],
    ]),
    n('timezone', 'convention', 250, 'All timestamps are stored in UTC; invoice dates are rendered in the customer account timezone.', [
      ['paraphrase', 'what timezone do we store dates in'],
    ]),
    n('e2e-flaky', 'gotcha', 14, 'The checkout e2e test flakes when the Stripe test clock is shared; give each test its own clock via createTestClock().', [
      ['identifier', 'createTestClock'],
      ['paraphrase', 'checkout end to end test fails randomly'],
    ]),
    n('bigint-json', 'gotcha', 88, 'bigint amounts do not survive JSON.stringify; serialise money through toWire() which turns them into strings.', [
      ['paraphrase', 'TypeError do not know how to serialize a BigInt'],
    ]),
    n('decimal-lib', 'decision', 175, 'Currency arithmetic uses dinero.js; hand-rolled percentage math caused the 2025 rounding incident.', []),
    n('ci-time', 'fact', 35, 'The CI pipeline takes about 11 minutes; the slowest step is the Postgres integration suite.', []),
    n('code-owners', 'fact', 160, 'src/ledger/ is owned by the finance-platform team; changes need one of their reviews (CODEOWNERS).', [
      ['paraphrase', 'who has to review ledger changes'],
    ]),
    n('export-csv', 'note', 9, 'Task BILL-815: the CSV export of invoices times out above 50k rows; stream it with cursor pagination.', [
      ['identifier', 'BILL-815'],
    ]),
    n('discount-order', 'gotcha', 48, 'Discounts apply before tax, not after; applying them after tax undercharges VAT and finance has to correct it by hand.', [
      ['paraphrase', 'do discounts come off before or after tax'],
    ]),
    n('account-deletion', 'constraint', 115, 'Deleting an account keeps invoices for seven years (bookkeeping law); only personal fields are blanked.', [
      ['paraphrase', 'what happens to invoices when a customer deletes their account'],
    ]),
    n('health-endpoint', 'fact', 60, 'GET /healthz checks Postgres and Redis; GET /livez only checks the process.', [['path', '/healthz']]),
    n('env-files', 'convention', 140, 'Local configuration goes in .env.local, which is git-ignored; .env.example lists every variable.', []),
    n('monorepo', 'fact', 230, 'billing-api is a single package; shared types come from the @acme/contracts package published to the internal registry.', []),
    n('admin-ui', 'fact', 95, 'The admin UI for refunds is in apps/admin and talks to /admin routes behind SSO.', []),
    n('statement-descriptor', 'constraint', 125, 'The card statement descriptor must be at most 22 characters: ACME* plus the product name.', [
      ['paraphrase', 'what shows up on the customer card statement'],
    ]),
    n('billing-misc-1', 'convention', 20, 'Pull request titles start with the ticket id, e.g. BILL-812: fix annual price on PDF.'),
    n('billing-misc-2', 'fact', 37, 'The billing-api Docker image is built by the build-image workflow and tagged with the git sha.'),
    n('billing-misc-3', 'gotcha', 54, 'Stripe test mode ignores the statement descriptor; check descriptors only in live mode with a real card.'),
    n('billing-misc-4', 'convention', 71, 'Error responses use the problem+json shape with type, title, status and a billing error code.'),
    n('billing-misc-5', 'fact', 88, 'Month-end close runs on the first working day; finance freezes the previous month\'s ledger at 18:00.'),
    n('billing-misc-6', 'decision', 105, 'Webhooks are processed at least once; handlers must be idempotent by provider event id.'),
    n('billing-misc-7', 'fact', 122, 'The ledger reconciliation job compares provider payouts with journal entries every night at 02:00 UTC.'),
    n('billing-misc-8', 'convention', 139, 'Service code never imports from src/http; HTTP handlers call services, not the other way round.'),
    n('billing-misc-9', 'gotcha', 156, 'The Avalara sandbox returns zero tax for unknown ZIP codes instead of an error; tests must use real ZIPs.'),
    n('billing-misc-10', 'fact', 173, 'Invoices are emailed through Postmark with the invoice-ready template; bounces land in #billing-alerts.'),
    n('billing-misc-11', 'constraint', 190, 'Personal data of EU customers stays in the eu-north-1 database; no replica outside the EU.'),
    n('billing-misc-12', 'convention', 207, 'Amounts in API responses are strings of minor units plus an ISO currency code.'),
  ],
  offTopic: [
    'recipe for sourdough bread',
    'who won the 1998 world cup',
    'xyzzy nothing matches',
    'best hiking trails in the alps',
    'how do I care for a fiddle leaf fig',
    'lyrics of bohemian rhapsody',
    'what is the capital of australia',
    'train times from berlin to prague',
  ],
};

const mobile: NamespaceSpec = {
  namespace: 'github.com/acme/mobile-app',
  notes: [
    n('rn-version', 'fact', 40, 'The app is on React Native 0.76 with the new architecture (Fabric) enabled; Hermes is the JS engine.', [
      ['paraphrase', 'which react native version are we on'],
    ]),
    n('node-version', 'fact', 30, 'The mobile toolchain needs Node 18; Metro breaks on Node 20 until the 0.77 upgrade.', [
      ['cross-namespace', 'which node version does this service run on'],
    ]),
    n('push-tokens', 'gotcha', 55, 'Push tokens rotate after an app reinstall; register the new token on every launch with registerDevice() or notifications silently stop.', [
      ['identifier', 'registerDevice'],
      ['paraphrase', 'users stopped getting notifications after reinstalling'],
    ]),
    n('navigation', 'decision', 150, 'Navigation uses expo-router with file-based routes under app/; react-navigation stacks were removed in the 2025 rewrite.', [
      ['paraphrase', 'how do screens and routing work in the app'],
    ]),
    n('state-mgmt', 'decision', 120, 'Server state lives in TanStack Query; local UI state in Zustand stores under src/stores/. Redux is not to be reintroduced.', [
      ['paraphrase', 'should I add redux for this new screen'],
      ['path', 'src/stores/'],
    ]),
    n('ios-build', 'gotcha', 20, 'iOS builds fail with "Command PhaseScriptExecution failed" when Xcode runs a Node from nvm it cannot find; set NODE_BINARY in ios/.xcode.env.local.', [
      ['error-code', 'Command PhaseScriptExecution failed'],
      ['path', 'ios/.xcode.env.local'],
    ]),
    n('android-minsdk', 'constraint', 200, 'Android minSdkVersion is 24; older devices are under 0.5% of sessions and were dropped.', [
      ['identifier', 'minSdkVersion'],
      ['paraphrase', 'what is the oldest android version we support'],
    ]),
    n('hermes-intl', 'gotcha', 85, 'Hermes lacks some Intl APIs; date formatting goes through formatDate() in src/lib/dates.ts, which wraps date-fns.', [
      ['identifier', 'formatDate'],
      ['paraphrase', 'toLocaleDateString gives the wrong format on android'],
    ]),
    n('offline-queue', 'decision', 95, 'Writes made offline are kept in an MMKV-backed outbox and replayed in order when connectivity returns; conflicts keep the server version.', [
      ['paraphrase', 'what happens to changes made without network'],
    ]),
    n('deep-links', 'fact', 70, 'Deep links use the scheme acme:// and universal links on app.acme.com; the mapping is in app/+native-intent.tsx.', [
      ['path', 'app/+native-intent.tsx'],
      ['paraphrase', 'how do links from emails open the right screen'],
    ]),
    n('ota-updates', 'constraint', 60, 'Over-the-air updates (EAS Update) may ship JS only; any native module change needs a store release.', [
      ['paraphrase', 'can I ship this fix without going through the app store'],
    ]),
    n('e2e-detox', 'convention', 110, 'End-to-end tests use Maestro flows in .maestro/; Detox was removed because it flaked on CI simulators.', [
      ['path', '.maestro/'],
      ['paraphrase', 'which tool runs the ui tests'],
    ]),
    n('testid', 'convention', 100, 'Every tappable element gets a testID in kebab-case, e.g. checkout-pay-button, so Maestro flows can find it.', [
      ['identifier', 'testID'],
    ]),
    n('crash-reporting', 'fact', 80, 'Crashes go to Sentry project mobile-app; source maps are uploaded by the eas-build-post-install hook.', [
      ['paraphrase', 'where can I see app crashes'],
    ]),
    n('keychain', 'constraint', 170, 'Auth tokens are stored only in the iOS Keychain / Android Keystore via expo-secure-store, never in AsyncStorage.', [
      ['paraphrase', 'where should the login token be saved on the device'],
    ]),
    n('err-network-timeout', 'gotcha', 35, 'ERR_NETWORK_TIMEOUT on Android emulators usually means the API base URL points at localhost; use 10.0.2.2 from the emulator.', [
      ['error-code', 'ERR_NETWORK_TIMEOUT'],
      ['paraphrase', 'emulator cannot reach the local backend'],
    ]),
    n('metro-cache', 'gotcha', 45, 'After switching branches, stale Metro cache causes "Unable to resolve module"; run npx expo start -c.', [
      ['error-code', 'Unable to resolve module'],
    ]),
    n('fonts', 'convention', 190, 'Fonts are loaded once in app/_layout.tsx with useFonts; screens must not load fonts themselves.', [
      ['path', 'app/_layout.tsx'],
    ]),
    n('theme-tokens', 'convention', 140, 'Colours and spacing come from the design tokens in src/theme/tokens.ts; raw hex values in components fail review.', [
      ['paraphrase', 'can I hardcode a colour in a component'],
      ['path', 'src/theme/tokens.ts'],
    ]),
    n('analytics', 'decision', 75, 'Product analytics events go through track() in src/lib/analytics.ts to Amplitude; event names are object_action in snake_case.', [
      ['identifier', 'track()'],
      ['paraphrase', 'how should analytics events be named'],
    ]),
    n('accessibility', 'constraint', 130, 'Touch targets must be at least 44×44 points and every icon button needs an accessibilityLabel.', [
      ['identifier', 'accessibilityLabel'],
    ]),
    n('image-cache', 'fact', 65, 'Remote images use expo-image with memory-disk caching; FastImage was dropped with the new architecture.', []),
    n('task-mob-431', 'note', 5, 'Task MOB-431: the checkout screen double-submits on slow networks; disable the pay button while the mutation is pending.', [
      ['identifier', 'MOB-431'],
    ]),
    n('task-mob-428', 'note', 11, 'Task MOB-428: dark mode contrast on the order history list fails WCAG AA; waiting on new tokens from design.', [
      ['identifier', 'MOB-428'],
    ]),
    route('route-checkout', 50, 'Checkout flow', 'Cart, payment sheet and order confirmation screens.', ['app/(shop)/checkout/', 'src/features/checkout/'], [
      ['path', 'src/features/checkout/'],
    ]),
    route('route-auth', 50, 'Authentication', 'Login, sign-up, token refresh and biometric unlock.', ['app/(auth)/', 'src/features/auth/'], [
      ['paraphrase', 'where is the login and signup code'],
    ]),
    route('route-native', 50, 'Native modules', 'Custom native modules and config plugins.', ['modules/', 'plugins/'], []),
    n('release-train@1', 'convention', 180, 'App store releases ship every two weeks on Monday.', []),
    n('release-train@2', 'convention', 25, 'The store release cadence is weekly now: builds are cut on Wednesday and submitted to review the same day.', [
      ['update', 'how often do we release the app to the stores'],
    ]),
    n('api-client@1', 'decision', 210, 'The API client is generated from the OpenAPI spec with openapi-generator into src/api/generated.', []),
    n('api-client@2', 'decision', 45, 'We replaced openapi-generator with orval; the typed hooks are generated into src/api/ by npm run api:gen.', [
      ['update', 'how is the api client generated'],
    ]),
    n('min-ios@1', 'constraint', 230, 'The minimum iOS version is 14.', []),
    n('min-ios@2', 'constraint', 130, 'Minimum iOS raised to 15 for the new architecture.', []),
    n('min-ios@3', 'constraint', 10, 'iOS 16 is now the minimum deployment target, because expo SDK 52 dropped iOS 15.', [
      ['update', 'what is the minimum ios version'],
    ]),
    n('forms@1', 'convention', 160, 'Forms use Formik with Yup schemas.', []),
    n('forms@2', 'convention', 35, 'New forms are written with react-hook-form and zod resolvers; Formik screens are migrated when touched.', [
      ['update', 'which form library should I use'],
    ]),
    n('build-service@1', 'fact', 250, 'Release builds are made on Bitrise.', []),
    n('build-service@2', 'fact', 60, 'Release builds moved from Bitrise to EAS Build; the profiles are in eas.json.', [
      ['update', 'where are release builds made'],
    ]),
    n('feature-toggle@1', 'convention', 190, 'Feature toggles come from LaunchDarkly via useFlag().', []),
    n('feature-toggle@2', 'convention', 28, 'LaunchDarkly was cancelled: feature toggles now come from our own /flags endpoint through useRemoteFlag(), cached for a session.', [
      ['update', 'where do feature toggles come from in the app'],
    ]),
    n('bundle-id@1', 'fact', 300, 'The iOS bundle identifier is com.acme.shop.', []),
    n('bundle-id@2', 'fact', 100, 'Since the rebrand the bundle identifier for new builds is com.acme.app; the old com.acme.shop listing redirects.', [
      ['update', 'what is the ios bundle id'],
    ]),
    n('beta-testers', 'note', 40, 'Beta testers for the loyalty feature are in the TestFlight group Loyalty-Beta.', [['forgotten', 'which testflight group has the loyalty beta testers']], 'forgotten'),
    n('review-freeze', 'note', 15, 'App Store review is paused over the holiday week: do not submit builds until it reopens.', [['expired', 'can we submit a build for review now']], 'expired'),
    n('lottie', 'fact', 150, 'Animations are Lottie files in assets/animations; keep each under 100 KB.', [
      ['paraphrase', 'how big can an animation file be'],
    ]),
    n('i18n', 'convention', 140, 'User-facing strings go through t() from src/i18n with keys in locales/en.json; hardcoded strings fail the lint rule no-literal-string.', [
      ['identifier', 'no-literal-string'],
      ['paraphrase', 'how do we translate text in the app'],
    ]),
    n('permissions', 'gotcha', 90, 'Asking for camera permission before explaining why gets the app rejected under guideline 5.1.1; show the pre-permission sheet first.', [
      ['error-code', 'guideline 5.1.1'],
    ]),
    n('android-keystore', 'constraint', 170, 'The Android upload keystore is managed by EAS credentials; nobody keeps a local copy.', []),
    n('flipper', 'gotcha', 120, 'Flipper is gone since React Native 0.74; debug with the React Native DevTools (press j in Metro).', [
      ['paraphrase', 'how do I open the debugger'],
    ]),
    n('list-perf', 'convention', 80, 'Long lists use FlashList with an estimatedItemSize; FlatList dropped frames on the order history.', [
      ['identifier', 'FlashList'],
    ]),
    n('haptics', 'convention', 200, 'Haptic feedback only on confirmations (payment done, item added), through haptics.success().', []),
    n('storybook', 'fact', 110, 'Components have stories in src/components/**/*.stories.tsx, run on device with npm run storybook.', []),
    n('ci-mobile', 'fact', 30, 'Pull requests run typecheck, jest and a Maestro smoke flow on an Android emulator; the run takes about 18 minutes.', [
      ['paraphrase', 'what checks run on a pull request'],
    ]),
    n('jest-mocks', 'gotcha', 60, 'Jest needs the native modules mocked in jest.setup.ts; a new native dependency without a mock fails with "TurboModuleRegistry.getEnforcing".', [
      ['error-code', 'TurboModuleRegistry.getEnforcing'],
    ]),
    n('payments-sheet', 'decision', 70, 'Payments use the Stripe PaymentSheet; we never render our own card fields, to stay out of PCI scope.', [
      ['paraphrase', 'can we build our own credit card form'],
    ]),
    n('session-length', 'constraint', 100, 'Refresh tokens last 30 days; after that the user must log in again, even with biometrics on.', [
      ['paraphrase', 'how long does a user stay logged in'],
    ]),
    n('app-size', 'constraint', 75, 'The Android download must stay under 40 MB; check with npx react-native-bundle-visualizer before adding a large dependency.', []),
    n('sentry-env', 'convention', 130, 'Sentry environment names are development, preview and production, matching the EAS build profiles.', []),
    n('splash', 'fact', 160, 'The splash screen is configured in app.config.ts with expo-splash-screen and hidden after fonts load.', [
      ['path', 'app.config.ts'],
    ]),
    n('orientation', 'constraint', 220, 'The app is portrait only except the video player screen.', [
      ['paraphrase', 'does the app support landscape'],
    ]),
    n('loyalty-points', 'decision', 50, 'Loyalty points are computed on the server only; the app shows the balance from /me/loyalty and never calculates it.', [
      ['paraphrase', 'should the app calculate reward points'],
    ]),
    n('onboarding', 'note', 16, 'Onboarding is three screens; the skip button was added after the A/B test showed no loss in activation.', []),
    n('reanimated', 'gotcha', 42, 'Reanimated worklets cannot call ordinary JS functions; wrap them with runOnJS or the app crashes on the UI thread.', [
      ['identifier', 'runOnJS'],
    ]),
    n('env-config', 'convention', 125, 'Environment values are read from app.config.ts extra via Constants.expoConfig; never import process.env in app code.', [
      ['identifier', 'Constants.expoConfig'],
    ]),
    n('store-screenshots', 'fact', 90, 'Store screenshots are generated by the Maestro flow .maestro/screenshots.yaml on each release.', []),
    n('mobile-misc-1', 'convention', 20, 'Screen components are named <Thing>Screen and live next to their route file.'),
    n('mobile-misc-2', 'fact', 37, 'The app talks to the gateway at api.acme.com/mobile/v3; the staging base URL is api.staging.acme.com.'),
    n('mobile-misc-3', 'gotcha', 54, 'Android back button on the payment sheet closes the sheet without a cancel callback; handle onDismiss.'),
    n('mobile-misc-4', 'convention', 71, 'Commits follow conventional commits (feat:, fix:, chore:) so the changelog is generated.'),
    n('mobile-misc-5', 'fact', 88, 'Crash-free sessions were 99.6% last month; the goal is 99.8%.'),
    n('mobile-misc-6', 'decision', 105, 'Images uploaded by users are resized on the device to 1600 px before upload.'),
    n('mobile-misc-7', 'gotcha', 122, 'Keyboard covers inputs on small Android phones unless the screen uses KeyboardAvoidingView with behavior height.'),
    n('mobile-misc-8', 'convention', 139, 'Hooks that fetch data are named use<Resource>Query and wrap one TanStack query each.'),
    n('mobile-misc-9', 'fact', 156, 'The design files are in Figma under Acme App 2026; tokens are exported with the tokens plugin.'),
    n('mobile-misc-10', 'constraint', 173, 'The app must work on a 3G connection: screens show cached data first and never block on the network.'),
    n('mobile-misc-11', 'fact', 190, 'Push notifications are sent by the notifications service through Expo push, not directly through APNs/FCM.'),
    n('mobile-misc-12', 'gotcha', 207, 'iOS simulators do not receive push notifications from Expo; test push on a real device.'),
  ],
  offTopic: [
    'how to train for a marathon',
    'what wine goes with salmon',
    'history of the roman empire',
    'best way to learn the piano as an adult',
    'how many moons does jupiter have',
    'cheap flights to lisbon in may',
    'knitting pattern for a wool scarf',
    'who painted the mona lisa',
  ],
};

const infra: NamespaceSpec = {
  namespace: 'github.com/acme/infra',
  notes: [
    n('terraform-state', 'constraint', 200, 'Terraform state lives in the S3 bucket acme-tf-state with DynamoDB locking; never run terraform with a local state file.', [
      ['paraphrase', 'where is the terraform state kept'],
      ['identifier', 'acme-tf-state'],
    ]),
    n('node-version', 'fact', 60, 'The base images in images/ pin Node 22 for every service that does not override NODE_VERSION.', [
      ['cross-namespace', 'which node version does this service run on'],
    ]),
    n('k8s-version', 'fact', 45, 'Production runs EKS 1.30; the upgrade to 1.31 is planned after the ingress-nginx migration.', [
      ['paraphrase', 'what kubernetes version is production on'],
    ]),
    n('state-lock', 'gotcha', 35, '"Error acquiring the state lock" means a crashed apply left a lock in DynamoDB; check nobody is applying, then terraform force-unlock <id>.', [
      ['error-code', 'Error acquiring the state lock'],
      ['paraphrase', 'terraform says the state is locked'],
    ]),
    n('oomkilled', 'gotcha', 25, 'Pods restarting with OOMKilled (exit code 137) usually means the JVM ignores the container limit; set -XX:MaxRAMPercentage=75.', [
      ['error-code', 'OOMKilled exit code 137'],
      ['identifier', 'MaxRAMPercentage'],
    ]),
    n('crashloop', 'gotcha', 50, 'CrashLoopBackOff right after a deploy is nearly always a missing secret; kubectl describe pod shows CreateContainerConfigError first.', [
      ['error-code', 'CrashLoopBackOff'],
      ['error-code', 'CreateContainerConfigError'],
    ]),
    n('modules-dir', 'convention', 150, 'Reusable Terraform lives in modules/<name> with a README and examples/; environments in envs/<env> only call modules.', [
      ['path', 'modules/'],
      ['paraphrase', 'how is the terraform code organised'],
    ]),
    n('tagging', 'constraint', 180, 'Every AWS resource needs the tags team, service and env; the tag-policy check in CI fails plans without them.', [
      ['paraphrase', 'which tags are required on cloud resources'],
    ]),
    n('secrets', 'decision', 160, 'Application secrets are kept in AWS Secrets Manager and synced into pods by external-secrets; no secret goes into a Helm values file.', [
      ['paraphrase', 'where should I put a database password for a service'],
      ['identifier', 'external-secrets'],
    ]),
    n('helm-charts', 'convention', 120, 'Services deploy with the shared chart charts/service; a service only supplies values-<env>.yaml.', [
      ['path', 'charts/service'],
    ]),
    n('argo', 'decision', 100, 'Deployments are GitOps through Argo CD watching the deploy/ folder; kubectl apply against production is not allowed.', [
      ['paraphrase', 'can I kubectl apply a fix in production'],
      ['path', 'deploy/'],
    ]),
    n('dns', 'fact', 140, 'Public DNS is in Route 53 zone acme.com; internal names live in the private zone acme.internal.', [
      ['paraphrase', 'where are dns records managed'],
    ]),
    n('certs', 'fact', 110, 'TLS certificates come from cert-manager with Let\'s Encrypt; the ClusterIssuer is letsencrypt-prod.', [
      ['identifier', 'letsencrypt-prod'],
      ['paraphrase', 'how do services get https certificates'],
    ]),
    n('cost-alerts', 'fact', 90, 'AWS Budgets alert #infra-cost at 80% and 100% of the monthly budget per account.', [
      ['paraphrase', 'who gets told when cloud spending goes over'],
    ]),
    n('backup-policy', 'constraint', 210, 'RDS snapshots are kept 35 days and copied to eu-north-1 nightly; restores are tested every quarter.', [
      ['paraphrase', 'how long are database backups kept'],
    ]),
    n('vpc-cidr', 'constraint', 250, 'VPC CIDRs come from the IPAM pool 10.64.0.0/10; never pick a range by hand, peering breaks on overlaps.', [
      ['identifier', '10.64.0.0/10'],
    ]),
    n('runbook-path', 'fact', 130, 'Runbooks are in docs/runbooks/<service>.md and linked from every PagerDuty alert.', [
      ['path', 'docs/runbooks/'],
    ]),
    n('tflint', 'convention', 115, 'Run make lint (tflint + terraform fmt -check) before opening a pull request.', [
      ['paraphrase', 'what should I run before opening a pr on terraform'],
    ]),
    n('spot', 'decision', 85, 'Stateless workloads run on spot nodes through Karpenter; databases and queues stay on on-demand.', [
      ['identifier', 'Karpenter'],
      ['paraphrase', 'can the worker pods run on spot instances'],
    ]),
    n('pdb', 'convention', 75, 'Every deployment with more than one replica needs a PodDisruptionBudget, or node drains take it down.', [
      ['identifier', 'PodDisruptionBudget'],
    ]),
    n('ingress-timeout', 'gotcha', 40, '504 Gateway Timeout on long uploads comes from the ingress default proxy-read-timeout of 60 s; raise it per ingress with an annotation.', [
      ['error-code', '504 Gateway Timeout'],
      ['identifier', 'proxy-read-timeout'],
    ]),
    n('iam-roles', 'convention', 170, 'Pods get AWS access through IRSA roles named <service>-<env>-irsa; never put access keys in a pod.', [
      ['paraphrase', 'how does a pod get permission to read from s3'],
    ]),
    n('observability', 'fact', 95, 'Metrics go to Prometheus and Grafana (grafana.acme.internal), logs to Loki, traces to Tempo.', [
      ['paraphrase', 'where can I see service logs'],
    ]),
    n('alert-rules', 'convention', 65, 'Alert rules live in deploy/monitoring/rules/*.yaml and each must have a runbook_url annotation.', [
      ['identifier', 'runbook_url'],
    ]),
    route('route-network', 60, 'Networking', 'VPCs, subnets, peering, NAT and transit gateway.', ['modules/network/', 'envs/prod/network.tf'], [
      ['path', 'modules/network/'],
    ]),
    route('route-eks', 60, 'EKS clusters', 'Cluster definitions, node pools and add-ons.', ['modules/eks/', 'envs/prod/eks.tf'], [
      ['paraphrase', 'where is the kubernetes cluster defined'],
    ]),
    route('route-ci', 60, 'CI pipelines', 'GitHub Actions workflows for plan/apply.', ['.github/workflows/'], []),
    n('task-inf-210', 'note', 4, 'Task INF-210: move the search service off the old m5 nodes; blocked until its memory limit is raised.', [
      ['identifier', 'INF-210'],
    ]),
    n('task-inf-198', 'note', 13, 'Task INF-198: rotate the RDS master passwords; billing and search done, mobile backend left.', [
      ['identifier', 'INF-198'],
    ]),
    n('region@1', 'decision', 300, 'All production workloads run in eu-west-1.', []),
    n('region@2', 'decision', 50, 'Production moved to eu-north-1 for the lower carbon footprint and price; eu-west-1 only holds the DR replica.', [
      ['update', 'which aws region is production in'],
    ]),
    n('ingress@1', 'decision', 200, 'Ingress is handled by ingress-nginx.', []),
    n('ingress@2', 'decision', 30, 'We are replacing ingress-nginx with the AWS Load Balancer Controller; new services get an ALB ingress class.', [
      ['update', 'which ingress controller should a new service use'],
    ]),
    n('apply-window@1', 'constraint', 180, 'Terraform applies to prod only on weekdays between 09:00 and 16:00.', []),
    n('apply-window@2', 'constraint', 20, 'Prod applies are allowed any working day until 18:00 now, except Fridays after noon.', [
      ['update', 'when am I allowed to apply terraform to production'],
    ]),
    n('db-engine@1', 'fact', 260, 'Databases are RDS Postgres 13.', []),
    n('db-engine@2', 'fact', 140, 'RDS instances were upgraded to Postgres 15.', []),
    n('db-engine@3', 'fact', 12, 'All databases now run on Aurora PostgreSQL 16; the plain RDS instances were retired last week.', [
      ['update', 'what postgres version do our databases run'],
    ]),
    n('tf-version@1', 'constraint', 230, 'Terraform is pinned to 1.5.7 everywhere.', []),
    n('tf-version@2', 'constraint', 35, 'We moved from Terraform to OpenTofu 1.8 after the licence change; .tool-versions pins it.', [
      ['update', 'which terraform version do we use'],
    ]),
    n('log-retention@1', 'constraint', 190, 'Logs are retained for 7 days in Loki.', []),
    n('log-retention@2', 'constraint', 45, 'Log retention in Loki is 30 days now, because incident reviews kept needing older logs.', [
      ['update', 'how long are logs kept'],
    ]),
    n('cluster-name@1', 'fact', 280, 'The production cluster is called prod-main.', []),
    n('cluster-name@2', 'fact', 50, 'After the region move the production cluster is prod-eun1; prod-main is being drained.', [
      ['update', 'what is the production cluster called'],
    ]),
    n('old-bastion', 'note', 70, 'SSH to the bastion host bastion.acme.com with your personal key to reach the databases.', [['forgotten', 'how do I ssh into the bastion host']], 'forgotten'),
    n('change-freeze', 'note', 25, 'Change freeze for the Black Friday weekend: no infrastructure changes until Monday.', [['expired', 'is there a change freeze on infrastructure']], 'expired'),
    n('ssm', 'decision', 60, 'Database access goes through SSM Session Manager port forwarding; the bastion host was removed.', [
      ['paraphrase', 'how do I reach a database from my laptop'],
    ]),
    n('cost-tags', 'fact', 105, 'Cost reports group by the team tag in Cost Explorer; untagged spend shows as team=unknown.', []),
    n('nat-cost', 'gotcha', 80, 'NAT gateway data charges doubled after the image pulls from Docker Hub; pull through the ECR cache instead.', [
      ['paraphrase', 'why is the nat gateway bill so high'],
    ]),
    n('ecr-lifecycle', 'convention', 125, 'ECR repositories keep the last 50 images; the lifecycle policy comes from modules/ecr.', []),
    n('gha-oidc', 'decision', 110, 'GitHub Actions reach AWS through OIDC roles; there are no long-lived AWS keys in repository secrets.', [
      ['paraphrase', 'how does ci authenticate to aws'],
    ]),
    n('plan-comments', 'fact', 90, 'Every pull request gets the terraform plan as a comment from the atlantis bot; apply with the comment atlantis apply.', [
      ['identifier', 'atlantis apply'],
    ]),
    n('drift', 'gotcha', 55, 'Changes made in the AWS console are reverted at the next apply; the nightly drift job reports them in #infra-drift.', [
      ['paraphrase', 'someone changed a setting in the console and it disappeared'],
    ]),
    n('hpa', 'convention', 70, 'HorizontalPodAutoscalers scale on CPU at 70% by default; queue workers scale on queue depth through KEDA.', [
      ['identifier', 'KEDA'],
      ['paraphrase', 'how do workers scale with the queue'],
    ]),
    n('redis', 'fact', 150, 'Redis is ElastiCache 7 in cluster mode; each service gets its own logical prefix, not its own cluster.', []),
    n('dns-ttl', 'gotcha', 100, 'Route 53 records default to a 300 s TTL; lower it to 60 a day before any migration.', [
      ['paraphrase', 'dns change takes ages to show up'],
    ]),
    n('kubectl-context', 'gotcha', 30, 'error: You must be logged in to the server (Unauthorized) means your SSO session expired; run aws sso login and retry.', [
      ['error-code', 'You must be logged in to the server (Unauthorized)'],
    ]),
    n('namespace-per-team', 'convention', 160, 'Each team owns one Kubernetes namespace named after the team; shared services live in platform.', []),
    n('image-scan', 'constraint', 85, 'Images with critical CVEs are blocked at admission by Kyverno; exceptions need a ticket with an expiry.', [
      ['paraphrase', 'my deploy was rejected because of a vulnerability'],
    ]),
    n('resource-requests', 'constraint', 140, 'Every container must set CPU and memory requests; pods without them are rejected by the LimitRange policy.', [
      ['identifier', 'LimitRange'],
    ]),
    n('oncall-infra', 'fact', 20, 'Infra on-call is the PagerDuty schedule PLATFORM-247 and hands over on Wednesdays.', [
      ['identifier', 'PLATFORM-247'],
    ]),
    n('s3-public', 'constraint', 240, 'S3 buckets are private; public files are served through CloudFront with origin access control only.', [
      ['paraphrase', 'can I make a bucket public'],
    ]),
    n('vault-gone', 'fact', 115, 'HashiCorp Vault was decommissioned in 2025; old docs that mention it are stale.', []),
    n('game-days', 'note', 75, 'Quarterly game days test a full AZ failure; the last one showed the search service needs three replicas.', []),
    n('infra-misc-1', 'convention', 20, 'Terraform resource names use snake_case and never repeat the resource type in the name.'),
    n('infra-misc-2', 'fact', 37, 'There are three AWS accounts: acme-dev, acme-staging and acme-prod, under one organisation.'),
    n('infra-misc-3', 'gotcha', 54, 'Deleting a Kubernetes namespace with finalizers can hang; check for leftover custom resources first.'),
    n('infra-misc-4', 'convention', 71, 'Every module pins provider versions with ~> constraints in versions.tf.'),
    n('infra-misc-5', 'fact', 88, 'The platform team\'s office hours are Thursdays 15:00 in the #platform channel.'),
    n('infra-misc-6', 'decision', 105, 'Service meshes were evaluated and rejected; mTLS between services is not required inside the VPC.'),
    n('infra-misc-7', 'gotcha', 122, 'Karpenter will not consolidate nodes running pods with do-not-disrupt annotations; remove stale ones.'),
    n('infra-misc-8', 'convention', 139, 'Helm values files never contain environment-specific hostnames; those come from the env overlay.'),
    n('infra-misc-9', 'fact', 156, 'CloudFront distributions are defined in modules/cdn and share one WAF web ACL.'),
    n('infra-misc-10', 'constraint', 173, 'Production databases are never reachable from the internet; no public subnets for RDS.'),
    n('infra-misc-11', 'fact', 190, 'The staging cluster is scaled to zero nodes at night and on weekends to save cost.'),
    n('infra-misc-12', 'gotcha', 207, 'Terraform plans show perpetual diffs for IAM policies with unsorted JSON; use aws_iam_policy_document.'),
  ],
  offTopic: [
    'how do I make a good espresso at home',
    'symptoms of a cold versus the flu',
    'best fantasy novels of the decade',
    'how to fold a fitted sheet',
    'what time does the sun set in reykjavik in june',
    'rules of cricket explained',
    'how to repot an orchid',
    'poems about the sea',
  ],
};

const search: NamespaceSpec = {
  namespace: 'github.com/acme/search-service',
  notes: [
    n('engine', 'decision', 220, 'Search runs on OpenSearch 2.13; Elasticsearch was dropped because of the licence.', [
      ['paraphrase', 'what search engine backs the product search'],
    ]),
    n('node-version', 'fact', 50, 'search-service is Python 3.12 only; the small Node 20 sidecar in sidecar/ handles the websocket autocomplete.', [
      ['cross-namespace', 'which node version does this service run on'],
    ]),
    n('reindex', 'convention', 110, 'Reindexing uses an alias swap: build products_v<N+1>, then move the products alias with scripts/swap_alias.py.', [
      ['path', 'scripts/swap_alias.py'],
      ['paraphrase', 'how do I rebuild the index without downtime'],
    ]),
    n('analyzer', 'decision', 95, 'Product titles use the custom analyzer title_analyzer: ICU tokenizer, lowercase, ascii folding and a synonym graph filter.', [
      ['identifier', 'title_analyzer'],
      ['paraphrase', 'how are product titles tokenized'],
    ]),
    n('synonyms', 'fact', 85, 'Synonyms are in config/synonyms.txt and only take effect after the index is reopened or rebuilt.', [
      ['path', 'config/synonyms.txt'],
      ['paraphrase', 'i added a synonym but search ignores it'],
    ]),
    n('circuit-breaker', 'gotcha', 40, 'circuit_breaking_exception [parent] Data too large comes from huge terms aggregations; cap size and use composite aggregations.', [
      ['error-code', 'circuit_breaking_exception'],
      ['paraphrase', 'aggregation fails with data too large'],
    ]),
    n('max-result-window', 'gotcha', 60, 'Paging past 10,000 hits fails with "Result window is too large"; use search_after for deep paging.', [
      ['error-code', 'Result window is too large'],
      ['identifier', 'search_after'],
    ]),
    n('ranking', 'decision', 75, 'Ranking is BM25 on title and description plus a function_score boost from sales in the last 30 days, capped at 2×.', [
      ['identifier', 'function_score'],
      ['paraphrase', 'do best sellers rank higher'],
    ]),
    n('ingest-pipeline', 'fact', 100, 'Product updates arrive on the Kafka topic catalog.products.v2 and are indexed by the consumer in search/ingest/consumer.py.', [
      ['identifier', 'catalog.products.v2'],
      ['path', 'search/ingest/consumer.py'],
    ]),
    n('lag', 'constraint', 90, 'A product change must be searchable within 60 seconds; the consumer lag alert fires at 45 seconds.', [
      ['paraphrase', 'how quickly must a price change show in search'],
    ]),
    n('typo-tolerance', 'decision', 70, 'Fuzzy matching is on only for terms of five letters or more (fuzziness AUTO:5,8) to keep short SKUs exact.', [
      ['identifier', 'AUTO:5,8'],
      ['paraphrase', 'why does a misspelled short word not match'],
    ]),
    n('sku-search', 'convention', 120, 'Queries that look like a SKU (two letters, dash, six digits) bypass full text and hit the sku keyword field.', [
      ['paraphrase', 'searching for an article number'],
    ]),
    n('latency-slo', 'constraint', 150, 'The search API SLO is p95 under 150 ms at the edge; anything slower in the load test blocks the release.', [
      ['paraphrase', 'how fast does search have to be'],
    ]),
    n('poetry', 'convention', 200, 'Dependencies are managed with uv; poetry.lock was removed. Run uv sync after pulling.', [
      ['paraphrase', 'how do I install the python dependencies'],
    ]),
    n('pytest', 'convention', 130, 'Tests run with pytest -n auto; integration tests need the opensearch container from docker-compose.test.yml.', [
      ['path', 'docker-compose.test.yml'],
    ]),
    n('mypy', 'constraint', 160, 'mypy runs in strict mode in CI; new modules without type hints fail the build.', [
      ['paraphrase', 'do I need type hints on new code'],
    ]),
    n('facets', 'fact', 80, 'Facets (brand, price band, colour) are computed from keyword subfields; the price bands are defined in search/facets.py.', [
      ['path', 'search/facets.py'],
    ]),
    n('autocomplete', 'fact', 65, 'Autocomplete uses an edge_ngram index products_suggest, separate from the main index, refreshed every 5 minutes.', [
      ['identifier', 'products_suggest'],
      ['paraphrase', 'how do search suggestions work as you type'],
    ]),
    n('zero-results', 'fact', 55, 'Zero-result queries are logged to the topic search.zero_results and reviewed every Monday to add synonyms.', [
      ['paraphrase', 'what do we do about searches that find nothing'],
    ]),
    n('shards', 'constraint', 140, 'The products index has 3 primary shards and 1 replica; keep shards between 10 and 50 GB.', [
      ['paraphrase', 'how many shards does the product index have'],
    ]),
    n('snapshot', 'fact', 170, 'Nightly OpenSearch snapshots go to the S3 repository search-snapshots, kept 14 days.', []),
    n('query-dsl', 'convention', 105, 'Query DSL is built with the builders in search/query/builder.py; never concatenate JSON strings for queries.', [
      ['path', 'search/query/builder.py'],
    ]),
    n('ltr', 'note', 30, 'Learning-to-rank is being evaluated offline on a click log sample; nothing in production uses it yet.', [
      ['paraphrase', 'is machine learned ranking live'],
    ]),
    route('route-query', 45, 'Query path', 'Request parsing, query building and response shaping.', ['search/api/', 'search/query/'], [
      ['path', 'search/query/'],
    ]),
    route('route-ingest', 45, 'Ingestion', 'Kafka consumer, document mapping and bulk indexing.', ['search/ingest/'], [
      ['paraphrase', 'where does indexing of products happen'],
    ]),
    route('route-relevance', 45, 'Relevance tuning', 'Analyzers, synonyms and boosts.', ['config/', 'search/ranking/'], []),
    n('task-srch-77', 'note', 7, 'Task SRCH-77: brand names with accents (Nestlé) miss unaccented queries; add asciifolding to brand_analyzer.', [
      ['identifier', 'SRCH-77'],
    ]),
    n('task-srch-81', 'note', 3, 'Task SRCH-81: colour facet counts are wrong for variants; aggregate on the parent product id.', [
      ['identifier', 'SRCH-81'],
    ]),
    n('refresh-interval@1', 'constraint', 200, 'The products index refresh_interval is 1s.', []),
    n('refresh-interval@2', 'constraint', 40, 'We raised refresh_interval on products to 30s to cut indexing load; freshness is covered by the 60 s lag budget.', [
      ['update', 'what is the refresh interval of the products index'],
    ]),
    n('embedding-model@1', 'decision', 150, 'Semantic search uses all-MiniLM-L6-v2 vectors in a knn_vector field.', []),
    n('embedding-model@2', 'decision', 35, 'Vectors for semantic search now come from bge-small-en-v1.5 (384 dimensions); MiniLM vectors were dropped at the last reindex.', [
      ['update', 'which embedding model does semantic search use'],
    ]),
    n('python-runtime@1', 'fact', 240, 'The service runs on Python 3.10.', []),
    n('python-runtime@2', 'fact', 120, 'We upgraded to Python 3.11 for the speedups.', []),
    n('python-runtime@3', 'fact', 15, 'The runtime is Python 3.12 since the base image bump; 3.11 is no longer tested.', [
      ['update', 'which python version does the service run'],
    ]),
    n('cache@1', 'decision', 180, 'Search responses are cached in Redis for 5 minutes.', []),
    n('cache@2', 'decision', 25, 'We stopped caching search responses in Redis (hit rate 3%); the CDN caches the popular queries for 60 s instead.', [
      ['update', 'are search results cached'],
    ]),
    n('owner@1', 'fact', 210, 'The search service is owned by the discovery team.', []),
    n('owner@2', 'fact', 45, 'Ownership of search moved from discovery to the new relevance team in the reorg.', [
      ['update', 'which team owns the search service'],
    ]),
    n('hybrid@1', 'decision', 160, 'Keyword and semantic results are merged by reciprocal rank fusion.', []),
    n('hybrid@2', 'decision', 20, 'Hybrid search merges keyword and semantic scores with min-max normalisation and a 0.3 semantic weight; the rank-based merge lost on the click log.', [
      ['update', 'how are keyword and semantic results combined'],
    ]),
    n('old-cluster', 'note', 90, 'The old Elasticsearch cluster es-legacy still serves the B2B catalogue.', [['forgotten', 'is es-legacy still serving anything']], 'forgotten'),
    n('load-test-window', 'note', 12, 'Load tests against staging search are running every night this week; expect slow responses after 22:00.', [['expired', 'why is staging search slow at night']], 'expired'),
    n('stopwords', 'gotcha', 100, 'Do not add "not" or "without" to the stopword list: "gluten free" and "without sugar" queries lost their meaning last time.', [
      ['paraphrase', 'can I remove the word without from queries'],
    ]),
    n('mapping-change', 'gotcha', 80, 'Changing a field mapping fails with illegal_argument_exception mapper cannot be changed; a mapping change always needs a reindex.', [
      ['error-code', 'illegal_argument_exception mapper cannot be changed'],
    ]),
    n('bulk-size', 'convention', 90, 'Bulk requests carry at most 5 MB or 1,000 documents, whichever comes first; bigger batches triggered 429 es_rejected_execution_exception.', [
      ['error-code', 'es_rejected_execution_exception'],
      ['paraphrase', 'how big should bulk index requests be'],
    ]),
    n('query-logging', 'constraint', 135, 'Search queries are logged without user ids; the session id is hashed with a daily salt.', [
      ['paraphrase', 'can we store which user searched for what'],
    ]),
    n('pinned-results', 'fact', 70, 'Merchandisers pin products for a query in the admin tool; pins are stored in the pins index and applied with a pinned query.', [
      ['paraphrase', 'how can marketing force a product to the top'],
    ]),
    n('geo', 'fact', 150, 'Store availability filtering uses a geo_distance filter on the stores field, default radius 25 km.', [
      ['identifier', 'geo_distance'],
    ]),
    n('benchmark-set', 'fact', 60, 'Relevance changes are judged against the 1,200-query judgement set in eval/judgements.csv with nDCG@10.', [
      ['path', 'eval/judgements.csv'],
      ['paraphrase', 'how do we measure if a ranking change is better'],
    ]),
    n('spellcheck', 'decision', 110, 'Did-you-mean suggestions come from the phrase suggester, shown only when the query returns fewer than 3 hits.', [
      ['paraphrase', 'when do we show did you mean'],
    ]),
    n('api-versioning', 'convention', 175, 'The public search API is versioned in the path (/v2/search); breaking changes need a new version.', []),
    n('pagination', 'constraint', 120, 'The API returns at most 48 products per page, matching the grid layout.', [
      ['paraphrase', 'what is the page size of search results'],
    ]),
    n('gunicorn', 'fact', 100, 'The API runs under gunicorn with uvicorn workers, 4 per pod; CPU limit 2 cores.', []),
    n('opensearch-client', 'convention', 115, 'Use the shared client from search/clients.py; it sets timeouts (2 s) and retries (2) that the SLO assumes.', [
      ['path', 'search/clients.py'],
    ]),
    n('language', 'fact', 125, 'Only English and German catalogues exist; German uses the decompounder for compound nouns.', [
      ['paraphrase', 'do we handle german compound words'],
    ]),
    n('index-template', 'convention', 95, 'Index settings and mappings come from the index template in templates/products.json; never create the index by hand.', [
      ['path', 'templates/products.json'],
    ]),
    n('dashboards', 'fact', 65, 'The search Grafana dashboard shows QPS, p95 latency, zero-result rate and consumer lag.', []),
    n('boost-abuse', 'gotcha', 50, 'Boosting by margin was tried and removed: it pushed irrelevant expensive items to the top and click-through fell 8%.', [
      ['paraphrase', 'should we rank products by profit margin'],
    ]),
    n('timeouts', 'gotcha', 45, 'ConnectionTimeout from the OpenSearch client during reindex means the cluster is overloaded; throttle with requests_per_second.', [
      ['error-code', 'ConnectionTimeout'],
    ]),
    n('search-misc-1', 'convention', 20, 'Python modules use snake_case names and absolute imports from the search package.'),
    n('search-misc-2', 'fact', 37, 'The search API is behind the gateway at /search/v2; the gateway adds the tenant header.'),
    n('search-misc-3', 'gotcha', 54, 'OpenSearch keyword fields are case sensitive; normalise with the lowercase normalizer before terms queries.'),
    n('search-misc-4', 'convention', 71, 'Every relevance experiment gets a short write-up in docs/experiments/ with the nDCG before and after.'),
    n('search-misc-5', 'fact', 88, 'The catalogue holds about 2.3 million products across both languages.'),
    n('search-misc-6', 'decision', 105, 'Out-of-stock products stay searchable but are demoted with a 0.5 multiplier.'),
    n('search-misc-7', 'gotcha', 122, 'Highlighting on the description field doubles latency; only highlight the title.'),
    n('search-misc-8', 'convention', 139, 'Log lines are JSON with a trace_id field so they join with the traces in Tempo.'),
    n('search-misc-9', 'fact', 156, 'The click log is exported daily to the data lake table search.clicks.'),
    n('search-misc-10', 'constraint', 173, 'Search must not return products from another tenant; every query carries a tenant filter.'),
    n('search-misc-11', 'fact', 190, 'Query understanding (brand and category detection) runs in search/understanding/ before the query is built.'),
    n('search-misc-12', 'gotcha', 207, 'Nested queries on variants are slow above 200 variants per product; flatten variants at index time.'),
  ],
  offTopic: [
    'how to change a bicycle tyre',
    'best chocolate cake recipe',
    'who wrote war and peace',
    'how far is the moon from earth',
    'ways to improve sleep quality',
    'what to see in kyoto in autumn',
    'how do whales communicate',
    'tips for a job interview',
  ],
};

export const CODING_NAMESPACES: NamespaceSpec[] = [billing, mobile, infra, search];
