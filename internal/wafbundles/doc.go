// Package wafbundles brings compiled WAF bundles from the PLM bundle
// fetcher into snapshots: the BundleWarmer declares what is wanted
// (Declare), snapshots read what was fetched (Fill), and bundles no
// longer wanted leave the fetcher's cache after a grace period.
package wafbundles
