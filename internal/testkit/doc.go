// Package testkit holds the helpers the module's tests share, so that no
// test package keeps its own copy: a settable clock (Clock), counting
// HTTP origins (Origin; Site, which counts robots.txt fetches and paths
// with Visits; NewSizedOrigin for benchmarks), raw TCP servers (Serve,
// and Echo, an echo server),
// an audit output on a full disk (FullDisk), readers of audit
// lines (AuditSink, ReadAuditLines), test credentials (BcryptHash,
// BasicAuth), a TestMain that keeps serve's
// state in a temporary directory (RunInStateDir), the real User-Agent
// corpora of testdata/agents (CrawlerUserAgents, RealBrowsers), and what
// timing tests measure gaps at the origin with (NewStampedServer,
// ArrivedAt, ClockCheck: see timing.go). It is for tests only: nothing
// outside a _test.go file imports it, and it imports nothing of the
// module.
package testkit
