package proxy_test

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

const usageRobots = "User-agent: *\nAllow: /\nContent-Usage: train-ai=n, search=y\nContent-Signal: ai-input=yes\n"

func usageHarness(t *testing.T, enforce bool, mode policy.Mode) *harness {
	t.Helper()
	decl := policy.NewDeclarations(map[string][]string{"TrainBot": {"train-ai"}, "SearchBot": {"search"}})
	return newHarness(t, harnessOptions{
		policy: func(o *policy.Options) {
			o.Mode = mode
			o.Usage = policy.UsageOptions{Enforce: enforce, Declarations: decl}
		},
	})
}

func TestUsagePreference(t *testing.T) {
	o := newPoliteOrigin(t, usageRobots)
	tests := []struct {
		name       string
		enforce    bool
		mode       policy.Mode
		ua         string
		wantStatus int
		wantLine   map[string]any
	}{
		{"refused and enforced", true, "", "TrainBot/1.0", 403,
			map[string]any{"decision": "deny", "reason": "usage-preference", "enforced": true, "usage_refused": "train-ai",
				"usage_rule": "line 3: Content-Usage: train-ai=n, search=y"}},
		{"refused, report mode", true, policy.ModeReport, "TrainBot/1.0", 200,
			map[string]any{"decision": "deny", "reason": "usage-preference", "enforced": false, "usage_refused": "train-ai"}},
		{"refused, not enforced", false, "", "TrainBot/1.0", 200,
			map[string]any{"decision": "allow", "reason": "rule", "usage_refused": "train-ai"}},
		{"allowed purpose", true, "", "SearchBot/1.0", 200,
			map[string]any{"decision": "allow", "usage_refused": nil}},
		{"nothing declared", true, "", "OtherBot/1.0", 200,
			map[string]any{"decision": "allow", "purposes": nil, "usage_refused": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := usageHarness(t, tt.enforce, tt.mode)
			resp, body := h.do(t, "GET", o.URL+"/doc", tt.ua, "")
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d (body %q)", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantStatus == 403 {
				if got := resp.Header.Get(proxy.HeaderRule); got != "line 3: Content-Usage: train-ai=n, search=y" {
					t.Errorf("%s: got %q, want the deciding line", proxy.HeaderRule, got)
				}
				if got := resp.Header.Get(proxy.HeaderReason); got != "usage-preference" {
					t.Errorf("%s: got %q, want usage-preference", proxy.HeaderReason, got)
				}
			}
			l := lastLine(t, h)
			assertFields(t, l, tt.wantLine)
			want := map[string]any{"train-ai": "n", "search": "y", "ai-input": "y"}
			if !reflect.DeepEqual(l["usage"], want) {
				t.Errorf("usage: got %v, want %v", l["usage"], want)
			}
			lines := []any{"line 3: Content-Usage: train-ai=n, search=y", "line 4: Content-Signal: ai-input=yes"}
			if !reflect.DeepEqual(l["usage_lines"], lines) {
				t.Errorf("usage_lines: got %v, want %v", l["usage_lines"], lines)
			}
		})
	}
}

func TestUsageResponseHeader(t *testing.T) {
	o := newPoliteOrigin(t, "User-agent: *\nAllow: /\n")
	o.next = func(w http.ResponseWriter) int {
		w.Header().Set("Content-Usage", "train-ai=n")
		return 200
	}
	h := usageHarness(t, true, "")
	// The field refuses train-ai, but comes with the response: the request
	// it answers is not denied for it.
	if resp, _ := h.do(t, "GET", o.URL+"/doc", "TrainBot/1.0", ""); resp.StatusCode != 200 {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	l := lastLine(t, h)
	assertFields(t, l, map[string]any{"decision": "allow", "usage_refused": nil})
	if want := map[string]any{"train-ai": "n"}; !reflect.DeepEqual(l["usage"], want) {
		t.Errorf("usage: got %v, want %v", l["usage"], want)
	}
	if want := []any{"header: Content-Usage: train-ai=n"}; !reflect.DeepEqual(l["usage_lines"], want) {
		t.Errorf("usage_lines: got %v, want %v", l["usage_lines"], want)
	}
	if want := []any{"train-ai"}; !reflect.DeepEqual(l["purposes"], want) {
		t.Errorf("purposes: got %v, want %v", l["purposes"], want)
	}
}

// TestReloadUsageDeclarations: a reload's new purposes (usage.purposes,
// in the new policy SetPolicy swaps in) decide the next request; before,
// the declarations were fixed at start while the reload reported them as
// applied.
func TestReloadUsageDeclarations(t *testing.T) {
	o := newPoliteOrigin(t, usageRobots)
	h := usageHarness(t, true, policy.ModeEnforce)
	if resp, _ := h.do(t, "GET", o.URL+"/page", "OtherBot/1.0", ""); resp.StatusCode != 200 {
		t.Fatalf("OtherBot with no declared purpose: got %d, want 200", resp.StatusCode)
	}
	reload := func(d *policy.Declarations) {
		o := h.popts
		o.Usage.Declarations = d
		h.proxy.SetPolicy(policy.New(o))
	}
	reload(policy.NewDeclarations(map[string][]string{"OtherBot": {"train-ai"}}))
	resp, _ := h.do(t, "GET", o.URL+"/page", "OtherBot/1.0", "")
	if resp.StatusCode != 403 || resp.Header.Get(proxy.HeaderReason) != "usage-preference" {
		t.Errorf("OtherBot declared train-ai after the swap: got %d %q, want 403 usage-preference",
			resp.StatusCode, resp.Header.Get(proxy.HeaderReason))
	}
	// A reload that removes every purpose (server.UsageDeclarations: nil)
	// declares none: TrainBot, declared at start, is no longer refused.
	reload(nil)
	if resp, _ := h.do(t, "GET", o.URL+"/page", "TrainBot/1.0", ""); resp.StatusCode != 200 {
		t.Errorf("TrainBot after every purpose was removed: got %d, want 200", resp.StatusCode)
	}
}
