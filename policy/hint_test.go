package policy_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/policy"
)

// TestHint: a refusal the operator can lift (a CONNECT port outside
// connect.ports, robots.txt unreachable for a TLS failure) says how, in
// Hint and as the last line of Text, naming the key and the serve flag;
// the unreachable retry line says a reload ends the refusal; other
// refusals have no hint.
func TestHint(t *testing.T) {
	p, _ := newStubPolicy("", policy.Options{ConnectPorts: []int{443, 8443}})
	port := p.DecideConnect(context.Background(), policy.Request{Host: "example.com:9443", UserAgent: "ExampleBot/1.0"}, true)
	var pe *policy.ConnectPortError
	if !errors.As(port.Err, &pe) || pe.Port != 9443 || port.Err.Error() != "port 9443: CONNECT port is not allowed (allowed: [443 8443])" {
		t.Errorf("CONNECT :9443: error %v, want a ConnectPortError for 9443 saying the ports allowed", port.Err)
	}
	fetched := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	unreachable := func(c policy.Cause) policy.Decision {
		return policy.Decision{Reason: auditlog.ReasonUnreachable, Access: policy.Unreachable, Cause: c,
			RobotsURL: "https://example.com/robots.txt", RobotsFetchedAt: fetched, Identity: policy.Identity{Token: "ExampleBot"}}
	}
	for _, tt := range []struct {
		name string
		d    policy.Decision
		want []string // in the hint; none: no hint
	}{
		{"connect port", port, []string{"connect.ports", "-connect-ports 443,8443,9443"}},
		{"unreachable, tls", unreachable(policy.CauseTLS), []string{"upstream.ca_file", "-upstream-ca-file FILE", "reload (SIGHUP)"}},
		{"unreachable, dns", unreachable(policy.CauseDNS), nil},
		{"host denied", policy.Decision{Reason: auditlog.ReasonHostDenied, Err: errors.New("denied")}, nil},
	} {
		hint, text := tt.d.Hint(), tt.d.Text(time.Minute)
		if len(tt.want) == 0 {
			if hint != "" || strings.Contains(text, "the operator") {
				t.Errorf("%s: Hint %q, Text %q; want no hint", tt.name, hint, text)
			}
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(hint, w) {
				t.Errorf("%s: Hint %q, want it to name %q", tt.name, hint, w)
			}
		}
		if !strings.HasSuffix(text, "robotsproxy: "+hint+"\n") {
			t.Errorf("%s: Text %q, want it to end with the hint's line", tt.name, text)
		}
	}
	dns := unreachable(policy.CauseDNS)
	if text := dns.Text(time.Minute); !strings.Contains(text, "fetched again after 2026-11-28T12:01:00Z (cache.unreachable_retry 1m0s) or when the configuration is reloaded (SIGHUP)") {
		t.Errorf("unreachable Text %q, want the retry line to say a reload fetches again", text)
	}
}
