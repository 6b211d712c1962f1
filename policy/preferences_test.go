package policy_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// prefs reads the preferences of body for path and the crawler Bot.
func prefs(body, path string) policy.Preferences {
	r := robots.Parse([]byte(body))
	return policy.RobotsPreferences(r.Usage(path, "bot"), r.Extras("bot"))
}

func TestFromRobots(t *testing.T) {
	tests := []struct {
		name, body, path string
		want             map[string]policy.UsageValue
		lines            []string
	}{
		{"nothing stated", "User-agent: *\nAllow: /\n", "/", nil, nil},
		{"content-usage", "User-agent: *\nContent-Usage: train-ai=n, search=y\n", "/",
			map[string]policy.UsageValue{"train-ai": "n", "search": "y"},
			[]string{"line 2: Content-Usage: train-ai=n, search=y", "line 2: Content-Usage: train-ai=n, search=y"}},
		{"longest path wins", "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /open/ train-ai=y\n", "/open/a",
			map[string]policy.UsageValue{"train-ai": "y"}, []string{"line 3: Content-Usage: /open/ train-ai=y"}},
		{"content-signal mapped", "User-agent: *\nContent-Signal: search=yes, ai-train=no, ai-input=no, use=reference\n", "/",
			map[string]policy.UsageValue{"train-ai": "n", "search": "y", "ai-input": "n"},
			[]string{"line 2: Content-Signal: ai-train=no", "line 2: Content-Signal: search=yes", "line 2: Content-Signal: ai-input=no"}},
		{"both, disagreeing: no wins", "User-agent: *\nContent-Usage: train-ai=y\nContent-Signal: ai-train=no\n", "/",
			map[string]policy.UsageValue{"train-ai": "n"},
			[]string{"line 2: Content-Usage: train-ai=y", "line 3: Content-Signal: ai-train=no"}},
		{"unknown labels and values ignored", "User-agent: *\nContent-Usage: train-genai=n, search=maybe\nContent-Signal: ai-train=perhaps\n", "/", nil, nil},
		{"the crawler's own group", "User-agent: *\nContent-Usage: train-ai=y\n\nUser-agent: bot\nContent-Usage: train-ai=n\n", "/",
			map[string]policy.UsageValue{"train-ai": "n"}, []string{"line 5: Content-Usage: train-ai=n"}},
		{"disallowed path: no content-usage", "User-agent: *\nDisallow: /\nContent-Usage: train-ai=y\n", "/", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := prefs(tt.body, tt.path)
			if got := p.Values(); !maps.Equal(got, tt.want) {
				t.Errorf("Values: got %v, want %v", got, tt.want)
			}
			var lines []string
			for _, s := range p {
				lines = append(lines, s.String())
			}
			if !slices.Equal(lines, tt.lines) {
				t.Errorf("statements: got %q, want %q", lines, tt.lines)
			}
		})
	}
}

func TestFromHeader(t *testing.T) {
	tests := []struct {
		values []string
		want   map[string]policy.UsageValue
	}{
		{nil, nil},
		{[]string{"train-ai=n, search=y"}, map[string]policy.UsageValue{"train-ai": "n", "search": "y"}},
		{[]string{"train-ai=y", "train-ai=n"}, map[string]policy.UsageValue{"train-ai": "n"}}, // one field: the last member wins
		{[]string{"train-ai=n;q=1"}, map[string]policy.UsageValue{"train-ai": "n"}},
		{[]string{"train-ai=\"n\""}, nil}, // a String, not the Token n
		{[]string{"Train-AI=n"}, nil},     // not an RFC 9651 Dictionary
		{[]string{"train-ai=n,"}, nil},
	}
	for _, tt := range tests {
		if got := policy.HeaderPreferences(tt.values).Values(); !maps.Equal(got, tt.want) {
			t.Errorf("FromHeader(%q): got %v, want %v", tt.values, got, tt.want)
		}
	}
	p := policy.HeaderPreferences([]string{"train-ai=n"})
	if len(p) != 1 || p[0].String() != "header: Content-Usage: train-ai=n" || p[0].Source != policy.SourceHeader {
		t.Errorf("FromHeader statement: got %+v", p)
	}
}

func TestEvaluate(t *testing.T) {
	body := "User-agent: *\nContent-Usage: train-ai=n, search=y\nContent-Signal: ai-input=no, search=yes\n"
	robotsPrefs := prefs(body, "/")
	header := policy.HeaderPreferences([]string{"search=n"})
	tests := []struct {
		name     string
		purposes []string
		prefs    policy.Preferences
		refused  string
		deciding string
	}{
		{"nothing declared", nil, robotsPrefs, "", ""},
		{"search allowed", []string{"search"}, robotsPrefs, "", ""},
		{"train-ai refused", []string{"search", "train-ai"}, robotsPrefs, "train-ai", "line 2: Content-Usage: train-ai=n, search=y"},
		{"ai-input refused by content-signal", []string{"ai-input"}, robotsPrefs, "ai-input", "line 3: Content-Signal: ai-input=no"},
		{"the header never refuses", []string{"search"}, append(slices.Clone(header), robotsPrefs...), "", ""},
		{"nothing stated", []string{"train-ai"}, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := policy.EvaluateUsage(tt.purposes, tt.prefs)
			got := ""
			if e.Refused != "" {
				got = e.Deciding.String()
			}
			if e.Refused != tt.refused || got != tt.deciding {
				t.Errorf("Evaluate(%v): refused %q by %q; want %q by %q", tt.purposes, e.Refused, got, tt.refused, tt.deciding)
			}
		})
	}
}

func TestDeclarations(t *testing.T) {
	d := policy.NewDeclarations(map[string][]string{"GPTBot": {"train-ai", "search"}})
	tests := []struct {
		pinned []string
		token  string
		want   []string
	}{
		{[]string{"search"}, "GPTBot", []string{"search"}},
		{[]string{"ai-input"}, "x", []string{"ai-input"}},
		{nil, "gptbot", []string{"train-ai", "search"}},
		{[]string{}, "GPTBOT", []string{"train-ai", "search"}},
		{nil, "other", nil},
	}
	for _, tt := range tests {
		if got := d.Purposes(tt.pinned, tt.token); !slices.Equal(got, tt.want) {
			t.Errorf("Purposes(%q, %q): got %v, want %v", tt.pinned, tt.token, got, tt.want)
		}
	}
	var none *policy.Declarations
	if got := none.Purposes(nil, "GPTBot"); got != nil {
		t.Errorf("nil Declarations: got %v, want nil", got)
	}
	if got := none.Purposes([]string{"search"}, "GPTBot"); !slices.Equal(got, []string{"search"}) {
		t.Errorf("nil Declarations with pinned purposes: got %v, want [search]", got)
	}
}

func TestSignalKey(t *testing.T) {
	for purpose, want := range map[string]string{"train-ai": "ai-train", "search": "search", "ai-input": "ai-input", "train-genai": ""} {
		if got := policy.SignalKey(purpose); got != want {
			t.Errorf("SignalKey(%q): got %q, want %q", purpose, got, want)
		}
	}
}

// TestPurposesAllocatesNothing: looking up a product token with capitals
// (as crawlers send them) allocates nothing on the request path.
func TestPurposesAllocatesNothing(t *testing.T) {
	d := policy.NewDeclarations(map[string][]string{"GPTBot": {policy.PurposeTrainAI}})
	for _, token := range []string{"GPTBot", "gptbot", "GPTBOT"} {
		if got := d.Purposes(nil, token); !slices.Equal(got, []string{policy.PurposeTrainAI}) {
			t.Errorf("Purposes(%q): got %v", token, got)
		}
	}
	if got := d.Purposes(nil, strings.Repeat("A", 65)); got != nil {
		t.Errorf("a long unknown token: got %v", got)
	}
	if n := testing.AllocsPerRun(100, func() { d.Purposes(nil, "GPTBot") }); n != 0 {
		t.Errorf("Purposes allocates %v times per call, want 0", n)
	}
}
