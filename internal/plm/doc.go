// Package plm fetches the WAF bundles that PLM (F5 WAF Policy Lifecycle
// Management) compiles and stores in S3-compatible storage, so that Gatewall
// can ship them to its NGINX data planes.
//
// What the package promises:
//
//   - Fetching never happens in the caller's goroutine. Want records the full
//     set of bundles currently wanted and returns at once; workers started by
//     Run fetch in the background and call Options.OnChange when a bundle's
//     Result changes. Result is a cheap in-memory lookup, safe to call while
//     building a graph.
//   - Bundles are content-addressed: one fetch per sha256, however many
//     policies, Gateways or locations want it. At most Options.Concurrency
//     fetches run at once.
//   - Every bundle is verified against its sha256 before it is used. A
//     mismatch is an IntegrityError and that (location, sha256) pair is not
//     fetched again while it stays wanted; only a change of the wanted
//     reference or of its revision (PLM processed the object again, which
//     changes status.processing.datetime even when the location and sha256
//     stay the same) starts a new fetch.
//   - Other failures (network, TLS, HTTP status, disk) are FetchErrors and are
//     retried with capped exponential backoff and jitter until they succeed or
//     the reference is no longer wanted. Changing credentials or TLS settings
//     retries them at once.
//   - Fetched bundles live in an on-disk cache (Options.CacheDir), one file
//     per sha256, written atomically and re-verified when New loads them. A
//     bundle fetched once stays available (Result reports Fetched) after it is
//     no longer wanted and across manager restarts, until Prune removes it.
//     So a restart needs no network to serve what was served before, and a
//     failed update leaves the previous bundle usable while the new one
//     reports Failed.
//   - Credentials and TLS settings can be replaced at any time
//     (SetCredentials, SetTLS); later requests use the new ones, so rotated
//     Secrets take effect without a restart. CredentialsFromSecret and
//     TLSFromSecrets turn the Secrets named by the manager's flags into those
//     settings.
//
// Bundle locations and sha256s come from another controller's status, so
// they pass api/plm's ParseLocation (plain s3://bucket/key locations only)
// and ValidateSha256 before anything is fetched.
package plm
