/**
 * A general software-engineering vocabulary: groups of words and phrases that name the same thing (or things
* an engineer asks about in each other's words), one group a line, members separated by commas. Written as a
* domain resource (abbreviations, spelled-out forms, common synonyms, the usual tool for a job), not from any
* benchmark's queries. Members are analysed like any text (core/lexical.ts: lower-cased, stop words dropped, 
* Porter-stemmed), so `deploys` and `deploying` match `deploy`. Keep a member specific: a word that names many
* things in ordinary prose (`key`, `run`, `set`) belongs in a phrase, not alone.
 */
export const VOCABULARY_GROUPS = `
i18n, internationalization, internationalisation, translation, translate, localization, localisation, l10n, locale
a11y, accessibility, screen reader, aria
auth, authentication, authenticate, login, signin, sign-in, logon
authorization, authorisation, authz, permission, access control, rbac, acl
signup, sign-up, registration, register, onboarding
logout, signout
password, passwd, passphrase, credential
credentials, creds, secret, secrets, api key, token, password
secret manager, secrets manager, vault, key vault, secret store, parameter store, ssm
mfa, 2fa, two-factor, two factor, multi-factor, otp, one-time password, totp
sso, single sign-on, single sign on, saml, oidc, openid
oauth, oauth2, openid connect, access token, refresh token
jwt, json web token, bearer token
session, cookie, session cookie
csrf, xsrf, cross-site request forgery
xss, cross-site scripting, html injection
sql injection, sqli
cors, cross-origin, cross origin, preflight
tls, ssl, https, certificate, cert
encryption, encrypt, encrypted, cipher, kms
hash, hashing, digest, checksum, bcrypt, argon2
db, database, datastore, data store
postgres, postgresql, psql, pg
mysql, mariadb
sqlite, sqlite3
mongo, mongodb, document store
redis, memcached, cache, caching, cached
elasticsearch, opensearch, elastic, search engine
dynamodb, dynamo, nosql
orm, object-relational mapping, prisma, typeorm, sequelize, sqlalchemy, hibernate, active record
migration, migrate, schema change, schema migration, ddl, alter table
index, indices, indexes, reindex
replica, read replica, replication, standby, follower
primary, master, leader, writer
failover, switchover, promote
backup, backups, snapshot, restore, point-in-time recovery, pitr, dump
transaction, transactions, txn, rollback, atomic
deadlock, lock, locking, lock contention, lock wait
connection pool, pool, pgbouncer, connection limit, too many connections
sharding, shard, partition, partitioning
foreign key, fk, constraint, referential integrity
primary key, pk, uuid, ulid
null, nil, undefined, missing value
timestamp, datetime, date time, time zone, timezone, tz, utc
cron, cronjob, cron job, scheduled job, scheduler, schedule, periodic task
queue, message queue, job queue, broker, sqs, rabbitmq, kafka, pubsub, pub/sub
worker, background job, background worker, async job, job, task runner, sidekiq, celery
consumer, subscriber, listener, handler
producer, publisher, emitter
event, webhook, callback, notification, hook
dead letter, dead-letter queue, dlq, poison message
idempotent, idempotency, idempotency key, dedupe, deduplicate, deduplication, duplicate, exactly-once, charged twice, double charge, double submit, processed twice
retry, retries, retrying, backoff, exponential backoff, retry policy, re-attempt
timeout, deadline, time limit
rate limit, rate limiting, throttle, throttling, quota, 429, too many requests
circuit breaker, bulkhead, fallback, degrade, graceful degradation
deploy, deployment, release, rollout, ship, shipping, go live, promote
rollback, roll back, revert, undo a release, downgrade
canary, canary release, progressive rollout, gradual rollout, blue-green, blue green
feature flag, feature toggle, flag, toggle, kill switch, launchdarkly, unleash
ci, continuous integration, pipeline, build pipeline, github actions, gitlab ci, jenkins, circleci, workflow
cd, continuous delivery, continuous deployment, argo, argocd, flux, spinnaker
build, compile, compilation, bundle, bundler, webpack, vite, esbuild, rollup
lint, linter, linting, eslint, prettier, formatter, format, style check, code style
type check, typecheck, type checking, tsc, mypy, type error
unit test, unit tests, jest, vitest, mocha, pytest, junit
integration test, integration tests, contract test
e2e, end-to-end, ui test, ui tests, acceptance test, detox, maestro, cypress, playwright, selenium, appium
snapshot test, golden file, golden test
mock, mocks, stub, fake, test double, spy
fixture, fixtures, seed data, test data, factory
coverage, code coverage, test coverage
flaky, flake, flakiness, intermittent, intermittently, nondeterministic, sporadic, random failure
regression, broke, broken, breaks, breakage
bug, defect, issue, problem, fault, glitch
crash, crashes, crashed, segfault, panic, abort, fatal
error, exception, failure, fail, fails, failed
stack trace, stacktrace, traceback, backtrace
hotfix, hot fix, patch, quick fix, emergency fix
incident, outage, downtime, sev1, sev, postmortem, post-mortem, pager
on-call, oncall, pagerduty, opsgenie, escalation, pager
alert, alerts, alerting, alarm, notify, notification
monitoring, observability, telemetry, metrics, dashboard, grafana, datadog, prometheus, new relic
logging, log, logs, logger, log line, structured logging
tracing, trace, traces, distributed tracing, span, opentelemetry, otel, jaeger, zipkin
sentry, error tracking, crash reporting, crashlytics, bugsnag
slo, sla, sli, service level, error budget, latency target, uptime target
latency, response time, slow, slowness, speed, fast, performance, perf, p95, p99, p50, percentile
throughput, rps, qps, requests per second, load
load test, load testing, stress test, benchmark, perf test, k6, locust, jmeter
memory leak, leak, oom, heap, memory usage
cpu, cpu usage, processor
disk, disk space, storage, volume, disk full
profiling, profiler, flame graph, hot path
k8s, kubernetes, kube, kubectl, cluster, eks, gke, aks
pod, pods, container
container, docker, image, dockerfile, oci
helm, chart, helm chart, values.yaml
namespace, namespaces
node, nodes, node pool, nodegroup, node group, worker node
eks, gke, aks, managed kubernetes
ingress, load balancer, lb, alb, elb, nlb, reverse proxy, nginx, envoy, traefik
service mesh, istio, linkerd, sidecar
autoscaling, autoscale, autoscaler, hpa, scaling
replicas, replica count, instances, horizontal scaling
liveness probe, readiness probe, health check, healthcheck, health endpoint, probe
configmap, config map, configuration, config, cfg, conf, settings
env var, env vars, environment variable, environment variables, env, dotenv, .env
environment, env, stage, staging, production, prod, dev, development, qa, sandbox
staging, stage, preprod, pre-production, uat
production, prod, live
local, localhost, local development, dev environment, devcontainer
terraform, tf, iac, infrastructure as code, opentofu, pulumi, cloudformation
infra, infrastructure
aws, amazon web services
gcp, google cloud, google cloud platform
azure, microsoft azure
s3, bucket, object storage, blob storage, gcs
cdn, cloudfront, cloudflare, fastly, edge cache
dns, domain, domain name, route 53, route53, nameserver, cname, ttl, propagation
vpc, network, subnet, security group, firewall, nat
iam, role, policy, permissions, service account, irsa
lambda, serverless, cloud function, cloud functions, faas
ec2, vm, virtual machine, instance, compute
cost, costs, spend, spending, bill, billing, budget, cloud cost, finops
region, availability zone, az, multi-region, data center, datacenter
git, version control, vcs, repo, repository
branch, branches, branching, feature branch, trunk
master, default branch, trunk
merge, merging, merge request, mr, pull request, pr, code review, review
rebase, squash, cherry-pick, cherry pick
commit, commits, changeset, revision
monorepo, mono repo, workspace, workspaces
dependency, dependencies, deps, package, packages, pkg, library, libraries, lib, module
npm, yarn, pnpm, package manager, package.json, node_modules
pip, poetry, pipenv, requirements.txt, virtualenv, venv
lockfile, lock file, package-lock, yarn.lock, pnpm-lock
upgrade, update, bump, version bump, dependency update, renovate, dependabot
deprecate, deprecated, deprecation, sunset, end of life, eol, legacy, obsolete
semver, semantic versioning, major version, breaking change
changelog, release notes, change log
api, endpoint, endpoints, route, routes, rest, http api
graphql, gql, schema, resolver, apollo
grpc, protobuf, proto, protocol buffers, rpc
websocket, websockets, socket, real-time, realtime, server-sent events, sse
http, request, response, status code
500, internal server error, server error, 5xx
401, unauthorized, unauthenticated
403, forbidden, access denied
400, bad request, validation error
502, 503, 504, bad gateway, service unavailable, gateway timeout
pagination, paging, paginate, page size, per page, cursor, next page
sort, sorting, ordering
filter, filtering, facet, facets
search, search engine, full-text, full text, fts
autocomplete, auto-complete, typeahead, suggest, suggestions, suggester
synonym, synonyms, thesaurus
relevance, ranking, rank, scoring, boost, boosting
zero results, zero-result, zero hits, empty results, empty result, nothing found, find nothing, returns nothing, null results
reindex, re-index, rebuild index, index rebuild, alias swap, zero downtime, zero-downtime, without downtime
typo, typos, fuzzy, fuzziness, misspelling, spelling
analyzer, analyser, tokenizer, tokeniser, stemming, stemmer, stop words
a/b test, ab test, a/b testing, experiment, split test
analytics, tracking, events tracking, segment, mixpanel, amplitude
payment, payments, checkout, charge, charges, card, credit card
payment provider, payment processor, payment gateway, stripe, adyen, braintree, paypal
invoice, invoices, invoicing, bill, receipt
subscription, subscriptions, plan, plans, recurring billing, renewal, renew
refund, refunds, chargeback, reversal
tax, taxes, vat, sales tax, gst
currency, currencies, money, amount, exchange rate, fx
decimal, rounding, round, precision, floating point, float, bigint, cents
price, pricing, prices, cost
discount, coupon, promo code, promotion, voucher
customer, customers
user, users, account, accounts, profile, member
tenant, tenants, multi-tenant, multi-tenancy, organisation, organization, org, workspace
admin, administrator, superuser, root, back office, backoffice
email, e-mail, mail, smtp, ses, sendgrid, mailgun
sms, text message, twilio
push notification, push notifications, push, apns, fcm, firebase cloud messaging
deep link, deep links, deeplink, universal link, universal links, app link, app links
mobile, ios, android, react native, expo, flutter
ios, iphone, ipad, xcode, swift, testflight, app store
android, gradle, kotlin, play store, google play
react native, rn, expo, metro
app store, play store, store review, app review, submission
offline, offline mode, connectivity, sync
local storage, localstorage, asyncstorage, async storage, keychain, keystore, secure storage, securestore
state management, redux, mobx, zustand, recoil, context api, global state
navigation, nav, navigator, router, routing, react navigation, screen, screens
frontend, front end, front-end, client side, ui, user interface, web app
backend, back end, back-end, server side, server, api server
css, styles, styling, stylesheet, tailwind, sass, scss
component, components, widget
form, forms, input, validation
dark mode, theme, theming, light mode
image, images, img, picture, photo, thumbnail, asset
font, fonts, typography
animation, animations, animate, transition, reanimated
splash screen, launch screen
hydration, ssr, server-side rendering, server side rendering, next.js, nextjs
javascript, js, node, nodejs, node.js, ecmascript
typescript, ts
python, py
golang, go
ruby, rails, ruby on rails
java, jvm, spring
rust, cargo, crate
json, yaml, yml, toml, config file
csv, spreadsheet, export, excel
pdf, pdfs, document, report
template, templates, templating, handlebars, hbs, mustache, jinja
upload, uploads, file upload, attachment, attachments
download, downloads
file, files, path, directory, dir, folder
serialize, serialization, serialise, marshal, json.stringify, encode
deserialize, deserialization, parse, parsing, unmarshal, decode
encoding, utf-8, utf8, unicode, charset
regex, regexp, regular expression, pattern
uuid, guid
concurrency, concurrent, parallel, parallelism, race condition, race, thread, threads
async, asynchronous, await, promise, promises, future, callback
sync, synchronous, blocking
cache invalidation, invalidate, purge, evict, eviction, stale, ttl
stale, outdated, old, expired
expire, expiry, expiration, expires, ttl
secret rotation, rotate, rotation, key rotation
config drift, drift
documentation, docs, doc, readme, wiki, runbook, playbook, guide
runbook, playbook, procedure, how-to, sop
adr, architecture decision, decision record, design doc, rfc, proposal
convention, conventions, style guide, guideline, guidelines, standard, rule
owner, owners, ownership, codeowners, maintainer, team
team, squad
onboarding, new hire, getting started, setup, install, installation
dev setup, local setup, bootstrap, makefile, make
script, scripts, cli, command line, command
shell, bash, zsh, terminal
ssh, bastion, jump host, jumpbox
vpn, private network, tunnel
proxy, forward proxy, reverse proxy
gateway, api gateway, edge
microservice, microservices
monolith, monolithic
architecture, design, system design
refactor, refactoring, rewrite, cleanup, restructure, tech debt, technical debt
performance regression, slowdown, slower, degraded
memory, ram
gc, garbage collection, garbage collector
n+1, n plus one, eager loading, lazy loading
batch, batching, bulk, batch job
stream, streaming, streams, backpressure
etl, data pipeline, ingestion, ingest
data warehouse, warehouse, bigquery, snowflake, redshift, analytics database
report, reports, reporting, finance report, bi, looker, metabase
gdpr, privacy, pii, personal data, data protection, right to be forgotten, erasure
compliance, audit, audit log, soc2, soc 2, pci, pci dss, hipaa
retention, retain, data retention, retention policy, ttl, archive, archiving
delete, deletion, remove, removal, purge, erase, soft delete
user id, userid, user_id
email address, e-mail address
phone number, phone, mobile number
address, addr, postal address, shipping address, billing address
order, orders, purchase, purchases, cart, basket
product, products, catalog, catalogue, sku, item, items, inventory, stock
shipping, delivery, fulfilment, fulfillment, shipment
warehouse, fulfilment center
webhook signature, signature, signing, hmac, verify signature
public, publicly, world-readable, anonymous access, open to the internet
private, internal, restricted
keyboard, shortcut, hotkey
startup, boot, cold start, launch, app start
shutdown, graceful shutdown, sigterm, drain
restart, reboot, bounce, recycle
capacity, limits, resource limits, requests and limits, quota
kill, killed, oomkilled, evicted, terminated
hang, hangs, hung, freeze, frozen, stuck, unresponsive
memory pressure, swap
secret scanning, gitleaks, trufflehog, leaked secret
vulnerability, vulnerabilities, cve, security advisory, audit, snyk, dependabot alert
sast, static analysis, codeql, sonarqube
code freeze, release freeze, freeze
release train, release cadence, release schedule, release day
sprint, iteration, milestone
ticket, tickets, jira, issue, task, story, linear
estimate, estimation, story points
hackathon, spike, prototype, proof of concept, poc
browser, chrome, firefox, safari, edge
window, tab, popup, modal, dialog
tooltip, toast, snackbar, banner
button, btn, link, click, tap
scroll, scrolling, infinite scroll, virtualized list, flatlist
list, table, grid
chart, graph, visualisation, visualization
map, maps, geolocation, location, gps
camera, photo library, gallery
permission prompt, runtime permission, permissions dialog
biometric, biometrics, face id, touch id, fingerprint
crash free, crash rate, stability
app size, bundle size, binary size
hermes, javascript engine, jsc
over-the-air, ota, codepush, eas update
code signing, app signing, provisioning profile, keystore, signing certificate
build number, version code, version name
web, website, web page, webpage
seo, search engine optimisation, search engine optimization, sitemap, meta tags
url, urls, uri, link, links, path
query string, query parameter, query params, querystring
header, headers, http header
body, payload, request body
cookie consent, consent, cookie banner
default, defaults, fallback value
allowed, allow, allowlist, whitelist, permitted
blocked, block, blocklist, blacklist, denylist, deny, forbidden
fix, fixed, workaround, solution, resolve, resolved
slow query, slow queries, query performance, explain, query plan, execution plan
vacuum, autovacuum, bloat, analyze
full table scan, seq scan, sequential scan, table scan
write, writes, insert, update, upsert
soft limit, hard limit
maximum, max, upper limit, cap, ceiling
minimum, lower limit, floor
enable, enabled, activate
disable, disabled, turn off, deactivate
required, mandatory, requirement
sdk, software development kit, client library
ux, user experience, usability
implementation, impl, implement
parameter, parameters, param, params, argument, arguments, arg, args
message, messages, msg
context, ctx
temporary, tmp
func, fn
service, services, svc
readonly, read-only
`;
