package e2e

import (
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// hashPassword runs "robotsproxy hash-password -cost 4" and checks the hash.
func hashPassword(t *testing.T, password string) string {
	t.Helper()
	stdout, stderr, code := runBinary(t, password+"\n", "hash-password", "-cost", "4")
	if code != 0 {
		t.Fatalf("hash-password: got exit code %d, want 0; stderr:\n%s", code, stderr)
	}
	hash := strings.TrimSpace(stdout)
	if err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)); err != nil {
		t.Fatalf("hash-password printed %q, which does not verify the password: %v", hash, err)
	}
	if cost, _ := bcrypt.Cost([]byte(hash)); cost != 4 {
		t.Errorf("hash-password -cost 4: got cost %d", cost)
	}
	return hash
}

// pinRobots gives AlphaBot and BetaBot opposite rules and shuts out
// everyone else.
const pinRobots = "User-agent: AlphaBot\nDisallow: /x\n\nUser-agent: BetaBot\nDisallow: /y\n\nUser-agent: *\nDisallow: /\n"

// pinCase is one request through a proxy with pinned identities.
type pinCase struct {
	name       string
	user, pass string // Proxy-Authorization Basic from the proxy URL; "" for none
	rawAuth    string // a Proxy-Authorization value sent as is, instead
	ua, path   string
	status     int
	reason     string
	token      string // product_token; "" for 407 lines, whose token is "*"
	source     string // token_source
	authUser   string // the audit field "user"; "" means absent
}

const realmHeader = `Basic realm="robotsproxy", charset="UTF-8"`

// TestPinnedIdentities: proxy users (Proxy-Authorization Basic) and
// client ranges pin the product token whatever the User-Agent says; 407
// answers missing (when required) and wrong credentials.
func TestPinnedIdentities(t *testing.T) {
	aliceHash, bobHash := hashPassword(t, "alice-secret"), hashPassword(t, "bob:secret é")
	users := fmt.Sprintf("  users:\n    - {name: alice, password_bcrypt: %q, token: AlphaBot}\n    - {name: bob, password_bcrypt: %q, token: BetaBot}\n", aliceHash, bobHash)
	const alicePW, bobPW = "alice-secret", "bob:secret é"

	o := newTestOrigin(t, pinRobots, false)
	tests := []struct {
		name   string
		config string
		cases  []pinCase
	}{
		{"users", "identity:\n" + users, []pinCase{
			{name: "alice /x", user: "alice", pass: alicePW, path: "/x", status: 403, reason: "rule", token: "AlphaBot", source: "credentials", authUser: "alice"},
			{name: "bob /x", user: "bob", pass: bobPW, path: "/x", status: 200, reason: "no-matching-rule", token: "BetaBot", source: "credentials", authUser: "bob"},
			{name: "alice /y", user: "alice", pass: alicePW, path: "/y", status: 200, reason: "no-matching-rule", token: "AlphaBot", source: "credentials", authUser: "alice"},
			{name: "bob /y", user: "bob", pass: bobPW, path: "/y", status: 403, reason: "rule", token: "BetaBot", source: "credentials", authUser: "bob"},
			{name: "alice spoofing BetaBot /x", user: "alice", pass: alicePW, ua: "BetaBot/1.0", path: "/x", status: 403, reason: "rule", token: "AlphaBot", source: "credentials", authUser: "alice"},
			{name: "bob spoofing AlphaBot /y", user: "bob", pass: bobPW, ua: "Mozilla/5.0 (compatible; AlphaBot/2.1)", path: "/y", status: 403, reason: "rule", token: "BetaBot", source: "credentials", authUser: "bob"},
			{name: "no credentials BetaBot UA /x", ua: "BetaBot/1.0", path: "/x", status: 200, reason: "no-matching-rule", token: "BetaBot", source: "user-agent"},
			{name: "no credentials browser UA /x", ua: "Mozilla/5.0", path: "/x", status: 403, reason: "rule", token: "*", source: "default"},
			{name: "alice wrong password", user: "alice", pass: "wrong", ua: "BetaBot/1.0", path: "/y", status: 407, reason: "proxy-auth-failed", source: "default", authUser: "alice"},
			{name: "unknown user", user: "mallory", pass: alicePW, path: "/y", status: 407, reason: "proxy-auth-failed", source: "default", authUser: "mallory"},
			{name: "not Basic", rawAuth: "Bearer abc", path: "/y", status: 407, reason: "proxy-auth-failed", source: "default"},
			{name: "alice again after failures", user: "alice", pass: alicePW, path: "/y", status: 200, reason: "no-matching-rule", token: "AlphaBot", source: "credentials", authUser: "alice"},
		}},
		{"required", "identity:\n  require_credentials: true\n" + users, []pinCase{
			{name: "no credentials", ua: "BetaBot/1.0", path: "/x", status: 407, reason: "proxy-auth-required", source: "default"},
			{name: "alice /y", user: "alice", pass: alicePW, path: "/y", status: 200, reason: "no-matching-rule", token: "AlphaBot", source: "credentials", authUser: "alice"},
			{name: "alice /x", user: "alice", pass: alicePW, ua: "BetaBot/1.0", path: "/x", status: 403, reason: "rule", token: "AlphaBot", source: "credentials", authUser: "alice"},
			{name: "bob wrong password", user: "bob", pass: alicePW, path: "/x", status: 407, reason: "proxy-auth-failed", source: "default", authUser: "bob"},
		}},
		// The range satisfies require_credentials; credentials win over it.
		{"client range", "identity:\n  require_credentials: true\n  client_ranges:\n    - {cidr: 127.0.0.0/8, token: BetaBot}\n" + users, []pinCase{
			{name: "no credentials AlphaBot UA /x", ua: "AlphaBot/1.0", path: "/x", status: 200, reason: "no-matching-rule", token: "BetaBot", source: "client-range"},
			{name: "no credentials AlphaBot UA /y", ua: "AlphaBot/1.0", path: "/y", status: 403, reason: "rule", token: "BetaBot", source: "client-range"},
			{name: "no credentials no UA /y", path: "/y", status: 403, reason: "rule", token: "BetaBot", source: "client-range"},
			{name: "alice /x", user: "alice", pass: alicePW, ua: "BetaBot/1.0", path: "/x", status: 403, reason: "rule", token: "AlphaBot", source: "credentials", authUser: "alice"},
			{name: "alice wrong password", user: "alice", pass: "nope", path: "/x", status: 407, reason: "proxy-auth-failed", source: "default", authUser: "alice"},
		}},
		{"most specific range", "identity:\n  client_ranges:\n    - {cidr: 127.0.0.0/8, token: BetaBot}\n    - {cidr: 127.0.0.1/32, token: AlphaBot}\n", []pinCase{
			{name: "no credentials /x", ua: "BetaBot/1.0", path: "/x", status: 403, reason: "rule", token: "AlphaBot", source: "client-range"},
		}},
	}
	total := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startProxy(t, tt.config)
			for i, c := range tt.cases {
				proxy := p.proxyURL(c.user, c.pass)
				tr := &http.Transport{Proxy: http.ProxyURL(proxy), DisableCompression: true}
				client := &http.Client{Transport: tr}
				req, _ := http.NewRequest(http.MethodGet, "http://"+o.host+c.path, nil)
				req.Header["User-Agent"] = []string{c.ua}
				if c.rawAuth != "" {
					req.Header.Set("Proxy-Authorization", c.rawAuth)
				}
				resp, err := client.Do(req)
				tr.CloseIdleConnections()
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				resp.Body.Close()
				checkPinResponse(t, c, resp)
				line := p.auditSince(t, i, 1)[0]
				checkPinLine(t, c, "http://"+o.host+c.path, line)
				total++
			}
			p.stop(t)
		})
	}
	o.mu.Lock()
	if o.proxyAuth != 0 {
		t.Errorf("origin: %d requests carried Proxy-Authorization, want 0 (the proxy must not forward credentials)", o.proxyAuth)
	}
	o.mu.Unlock()
	t.Logf("pinned identities over plain HTTP: %d requests", total)

	t.Run("https", func(t *testing.T) { testPinnedHTTPS(t, users, alicePW, bobPW) })
}

func checkPinResponse(t *testing.T, c pinCase, resp *http.Response) {
	t.Helper()
	if resp.StatusCode != c.status {
		t.Errorf("%s: GET %s: got status %d, want %d (%s)", c.name, c.path, resp.StatusCode, c.status, c.reason)
		return
	}
	if got := resp.Header.Get("Proxy-Authenticate"); (c.status == 407) != (got != "") || c.status == 407 && got != realmHeader {
		t.Errorf("%s: Proxy-Authenticate %q, want %q on 407 only", c.name, got, realmHeader)
	}
	if c.status != 200 {
		if got := resp.Header.Get("X-Robotsproxy-Reason"); got != c.reason {
			t.Errorf("%s: X-Robotsproxy-Reason %q, want %q", c.name, got, c.reason)
		}
	}
	if c.status == 403 {
		if got := resp.Header.Get("X-Robotsproxy-Product-Token"); got != c.token {
			t.Errorf("%s: X-Robotsproxy-Product-Token %q, want %q", c.name, got, c.token)
		}
	}
}

func checkPinLine(t *testing.T, c pinCase, u string, line map[string]any) {
	t.Helper()
	decision := "deny"
	if c.status == 200 {
		decision = "allow"
	}
	want := map[string]any{"url": u, "status": c.status, "decision": decision, "reason": c.reason, "token_source": c.source, "user": fieldAbsent}
	if c.authUser != "" {
		want["user"] = c.authUser
	}
	if c.token != "" {
		want["product_token"] = c.token
	}
	if ms := auditMismatches(line, want); len(ms) > 0 {
		t.Errorf("%s: audit line %s: %s", c.name, compactJSON(line), strings.Join(ms, "; "))
	}
}

// testPinnedHTTPS: with interception, the credentials come on the CONNECT
// (Go's Transport sends them there when the proxy URL has user:password)
// and pin every request inside the tunnel, whatever its User-Agent.
func testPinnedHTTPS(t *testing.T, users, alicePW, bobPW string) {
	ca := initCA(t)
	o := newTestOrigin(t, pinRobots, true)
	cfg := mitmConfig(o, fmt.Sprintf("mitm:\n  ca_cert: %q\n  ca_key: %q\nidentity:\n  require_credentials: true\n%s", ca.certFile, ca.keyFile, users))
	p := startProxyEnv(t, cfg, trustEnv(t, o.pemFile))
	base := "https://" + o.host
	audited := 0

	type req struct {
		path   string
		status int
		reason string
	}
	sessions := []struct {
		user, pass, token string
		reqs              []req
	}{
		{"alice", alicePW, "AlphaBot", []req{{"/x", 403, "rule"}, {"/y", 200, "no-matching-rule"}, {"/robots.txt", 200, "implicit-robots-txt"}}},
		{"bob", bobPW, "BetaBot", []req{{"/x", 200, "no-matching-rule"}, {"/y", 403, "rule"}}},
	}
	for _, s := range sessions {
		client := httpsClient(p.proxyURL(s.user, s.pass), ca.pool, nil)
		var wants []map[string]any
		for _, r := range s.reqs {
			// The User-Agent claims the other crawler: the pin wins.
			resp, _, err := getVia(client, base+r.path, "BetaBot/1.0 AlphaBot/1.0")
			if err != nil {
				t.Fatalf("%s: GET %s%s: %v", s.user, base, r.path, err)
			}
			if resp.StatusCode != r.status {
				t.Errorf("%s (pinned %s) inside the tunnel: GET %s: got %d, want %d", s.user, s.token, r.path, resp.StatusCode, r.status)
			}
			decision := "deny"
			if r.status == 200 {
				decision = "allow"
			}
			wants = append(wants, withFields(innerLine(o, r.path, decision, r.reason, r.status, positiveNumber()),
				map[string]any{"product_token": s.token, "token_source": "credentials", "user": s.user}))
		}
		client.Transport.(*http.Transport).CloseIdleConnections()
		wants = append(wants, withFields(connectLine(o), map[string]any{"product_token": s.token, "token_source": "credentials", "user": s.user}))
		lines := p.auditSince(t, audited, len(wants))
		matchAudit(t, s.user+" over https", lines, wants)
		audited += len(lines)
	}

	// 407 on the CONNECT: no credentials, then a wrong password.
	for _, c := range []struct {
		user, pass, reason string
	}{{"", "", "proxy-auth-required"}, {"alice", "wrong", "proxy-auth-failed"}} {
		var status atomic.Int64
		var challenge atomic.Value
		client := httpsClient(p.proxyURL(c.user, c.pass), ca.pool, func(r *http.Response) {
			status.Store(int64(r.StatusCode))
			challenge.Store(r.Header.Get("Proxy-Authenticate"))
		})
		_, _, err := getVia(client, base+"/y", "AlphaBot/1.0")
		if err == nil || status.Load() != 407 || challenge.Load() != realmHeader {
			t.Errorf("CONNECT as %q: got error %v, CONNECT status %d, Proxy-Authenticate %v; want an error, 407 and %q", c.user, err, status.Load(), challenge.Load(), realmHeader)
		}
		want := map[string]any{"method": "CONNECT", "url": o.host, "decision": "deny", "reason": c.reason, "status": 407, "tunnel": fieldAbsent, "user": fieldAbsent}
		if c.user != "" {
			want["user"] = c.user
		}
		matchAudit(t, "CONNECT "+c.reason, p.auditSince(t, audited, 1), []map[string]any{want})
		audited++
	}

	// curl sends --proxy-user credentials on the CONNECT only.
	wantY := 1 // alice's /y by Go; bob's /x is the only allowed /x
	if _, err := exec.LookPath("curl"); err == nil {
		wantY++
		for _, r := range []struct {
			path   string
			status int
		}{{"/x", 403}, {"/y", 200}} {
			res, code, stderr := curlHTTPS(t, p.proxyAddr, base+r.path, "--cacert", ca.certFile, "--proxy-user", "alice:"+alicePW, "-A", "BetaBot/1.0")
			if code != 0 || res.status != r.status {
				t.Errorf("curl --proxy-user alice -A BetaBot/1.0 %s%s: got exit %d status %d (%s), want %d", base, r.path, code, res.status, stderr, r.status)
			}
		}
		lines := p.auditSince(t, audited, 4)
		pin := map[string]any{"product_token": "AlphaBot", "token_source": "credentials", "user": "alice"}
		matchAudit(t, "curl over https", lines, []map[string]any{
			withFields(connectLine(o), pin), withFields(connectLine(o), pin),
			withFields(innerLine(o, "/x", "deny", "rule", 403, positiveNumber()), pin),
			withFields(innerLine(o, "/y", "allow", "no-matching-rule", 200, len("origin:/y")), pin),
		})
		audited += len(lines)
	} else {
		t.Log("SKIPPED the curl part: curl not installed")
	}
	p.stop(t)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.proxyAuth != 0 || o.hits["/x"] != 1 || o.hits["/y"] != wantY {
		t.Errorf("origin: %d requests with Proxy-Authorization (want 0), /x %d and /y %d requests (want 1 and %d: only allowed requests reach it)", o.proxyAuth, o.hits["/x"], o.hits["/y"], wantY)
	}
	t.Logf("pinned identities over intercepted HTTPS: %d audit lines, robots.txt fetched %d time(s)", audited, o.robotsFetches)
}

// TestHostLists: allow_hosts and deny_hosts refuse a destination before
// anything is sent to it (reason host-denied). The lists match host names
// as written in the request, not resolved addresses: "localhost" and
// "127.0.0.1" are different hosts to them.
func TestHostLists(t *testing.T) {
	tests := []struct {
		name    string
		config  string
		allowed map[string]bool // by host name
	}{
		{"allow localhost", "allow_hosts: [localhost]\n", map[string]bool{"localhost": true, "127.0.0.1": false}},
		{"deny 127.0.0.1", "deny_hosts: [127.0.0.1]\n", map[string]bool{"localhost": true, "127.0.0.1": false}},
		{"deny wins over allow", "allow_hosts: [127.0.0.1, localhost]\ndeny_hosts: [127.0.0.1]\n", map[string]bool{"localhost": true, "127.0.0.1": false}},
		{"leading dot covers the host", "allow_hosts: [.localhost]\n", map[string]bool{"localhost": true, "127.0.0.1": false}},
		{"case-insensitive", "deny_hosts: [LocalHost]\n", map[string]bool{"localhost": false, "127.0.0.1": true}},
		{"empty lists", "", map[string]bool{"localhost": true, "127.0.0.1": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newTestOrigin(t, "User-agent: *\nDisallow: /private\n", false)
			p := startProxy(t, fmt.Sprintf("%sconnect:\n  ports: [%d]\nmitm:\n  mode: host-level\n", tt.config, o.port)) // the CONNECT gets a host decision
			client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(p.proxyURL("", ""))}}
			n := 0
			for _, host := range []string{"localhost", "127.0.0.1"} {
				hostPort := fmt.Sprintf("%s:%d", host, o.port)
				u := "http://" + hostPort + "/page"
				resp, body, err := getVia(client, u, "HostBot/1.0")
				if err != nil {
					t.Fatalf("GET %s: %v", u, err)
				}
				want := map[string]any{"url": u, "product_token": "HostBot"}
				if tt.allowed[host] {
					if resp.StatusCode != 200 || string(body) != "origin:/page" {
						t.Errorf("GET %s: got %d %q, want 200 from the origin", u, resp.StatusCode, body)
					}
					withFields(want, map[string]any{"status": 200, "decision": "allow", "reason": "no-matching-rule"})
				} else {
					if resp.StatusCode != 403 || resp.Header.Get("X-Robotsproxy-Reason") != "host-denied" {
						t.Errorf("GET %s: got %d reason %q (%q), want 403 host-denied", u, resp.StatusCode, resp.Header.Get("X-Robotsproxy-Reason"), body)
					}
					withFields(want, map[string]any{"status": 403, "decision": "deny", "reason": "host-denied", "error": fieldContains("not allowed by the destination policy")})
				}
				checks := []map[string]any{want}

				// A CONNECT to the same host gets the same host decision
				// (no CA: the robots.txt of "/" is not even fetched when
				// the host is refused).
				before := o.conns.Load()
				cresp, cbody := rawConnect(t, p.proxyAddr, hostPort, http.Header{"User-Agent": {"HostBot/1.0"}})
				if !tt.allowed[host] {
					if cresp.StatusCode != 403 || cresp.Header.Get("X-Robotsproxy-Reason") != "host-denied" {
						t.Errorf("CONNECT %s: got %d reason %q (%q), want 403 host-denied", hostPort, cresp.StatusCode, cresp.Header.Get("X-Robotsproxy-Reason"), cbody)
					}
					if d := o.conns.Load() - before; d != 0 {
						t.Errorf("CONNECT %s (host denied): the origin got %d connections, want 0", hostPort, d)
					}
					checks = append(checks, map[string]any{"method": "CONNECT", "url": hostPort, "status": 403, "reason": "host-denied"})
				} else {
					// The robots.txt of "/" is fetched over https, which
					// this plain-HTTP origin cannot answer: unreachable.
					checks = append(checks, map[string]any{"method": "CONNECT", "url": hostPort, "status": 403, "reason": "unreachable"})
					if cresp.StatusCode != 403 || cresp.Header.Get("X-Robotsproxy-Reason") != "unreachable" {
						t.Errorf("CONNECT %s: got %d reason %q (%q), want 403 unreachable (robots.txt over https from a plain-HTTP origin)", hostPort, cresp.StatusCode, cresp.Header.Get("X-Robotsproxy-Reason"), cbody)
					}
				}
				matchAudit(t, host, p.auditSince(t, n, 2), checks)
				n += 2
			}
			p.stop(t)
			o.mu.Lock()
			defer o.mu.Unlock()
			for host, allowed := range tt.allowed {
				hostPort := fmt.Sprintf("%s:%d", host, o.port)
				got := o.byHost[hostPort]
				switch {
				case !allowed && got != 0:
					t.Errorf("origin: got %d requests with Host %s, want 0 (host denied: not even robots.txt)", got, hostPort)
				case allowed && got != 2:
					t.Errorf("origin: got %d requests with Host %s, want 2 (robots.txt and /page)", got, hostPort)
				}
			}
		})
	}
}

// reportCase is one request from a pinned client range.
type reportCase struct {
	path     string
	status   int
	decision string
	reason   string
	enforced bool
}

// TestClientRangeReportMode: a client range with mode report pins its
// product token and forwards the requests robots.txt disallows, auditing
// them as unenforced denials; a range with mode enforce refuses them
// although the proxy's default mode is report.
func TestClientRangeReportMode(t *testing.T) {
	o := newTestOrigin(t, pinRobots, false)
	for _, tt := range []struct {
		name, config string
		cases        []reportCase
	}{
		{"report", "identity:\n  client_ranges:\n    - {cidr: 127.0.0.0/8, token: BetaBot, mode: report}\n", []reportCase{
			{"/y", 200, "deny", "rule", false},
			{"/x", 200, "allow", "no-matching-rule", true},
		}},
		{"enforce", "mode: report\nidentity:\n  client_ranges:\n    - {cidr: 127.0.0.0/8, token: BetaBot, mode: enforce}\n", []reportCase{
			{"/y", 403, "deny", "rule", true},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := startProxy(t, tt.config)
			defer p.stop(t)
			for i, c := range tt.cases {
				tr := &http.Transport{Proxy: http.ProxyURL(p.proxyURL("", "")), DisableCompression: true}
				req, _ := http.NewRequest(http.MethodGet, "http://"+o.host+c.path, nil)
				req.Header.Set("User-Agent", "AlphaBot/1.0")
				resp, err := (&http.Client{Transport: tr}).Do(req)
				tr.CloseIdleConnections()
				if err != nil {
					t.Fatalf("GET %s: %v", c.path, err)
				}
				resp.Body.Close()
				if resp.StatusCode != c.status {
					t.Errorf("GET %s from a %s-mode range: got status %d, want %d", c.path, tt.name, resp.StatusCode, c.status)
				}
				line := p.auditSince(t, i, 1)[0]
				want := map[string]any{"status": c.status, "decision": c.decision, "reason": c.reason, "enforced": c.enforced,
					"product_token": "BetaBot", "token_source": "client-range"}
				if ms := auditMismatches(line, want); len(ms) > 0 {
					t.Errorf("GET %s: audit line %s: %s", c.path, compactJSON(line), strings.Join(ms, "; "))
				}
			}
		})
	}
}
