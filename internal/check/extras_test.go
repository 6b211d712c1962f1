package check_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/check"
)

// extrasTxt has every record check reports; the comments give line numbers.
const extrasTxt = `Sitemap: https://example.com/sitemap.xml
Sitemap: /relative.xml
User-agent: *
Crawl-delay: 2.5
Request-rate: 10/1m 2100-0459
Content-Signal: search=yes, ai-train=no
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y, search=n

User-agent: ExampleBot
Allow: /
`

func TestRunExtrasJSON(t *testing.T) {
	path := writeRobots(t, extrasTxt)
	const file = `"crawl_delay":{"seconds":2.5,"line":4},` +
		`"request_rate":{"requests":10,"period_seconds":60,"interval_seconds":6,"window":"21:00-04:59","line":5},` +
		`"sitemaps":["https://example.com/sitemap.xml"],` +
		`"content_signal":{"search":{"value":"yes","line":6},"ai-train":{"value":"no","line":6}}`
	tests := []struct {
		url, usage, want string
	}{
		{"http://example.com/x", "", `{"url":"http://example.com/x","allowed":true,"product_tokens":["Googlebot"],"group":"*","groups":[{"line":3,"agents":["*"]}],"star_fallback":true,` + file +
			`,"content_usage":{"rules":[{"line":8,"text":"Content-Usage: train-ai=n"}],"preferences":{"train-ai":{"pref":"n","line":8},"search":{"pref":"unknown"}}}}`},
		{"http://example.com/ai-ok/x", "search", `{"url":"http://example.com/ai-ok/x","allowed":true,"product_tokens":["Googlebot"],"group":"*","groups":[{"line":3,"agents":["*"]}],"star_fallback":true,` + file +
			`,"content_usage":{"rules":[{"line":9,"text":"Content-Usage: /ai-ok/ train-ai=y, search=n"}],"preferences":{"train-ai":{"pref":"y","line":9},"search":{"pref":"n","line":9}}}` +
			`,"usage":{"purpose":"search","content_usage":"n","content_usage_line":9,"content_signal":"yes","content_signal_line":6}}`},
		{"http://example.com/never/x", "ai-input", `{"url":"http://example.com/never/x","allowed":false,"product_tokens":["Googlebot"],"group":"*","groups":[{"line":3,"agents":["*"]}],` +
			`"rule":{"text":"Disallow: /never/","line":7,"allow":false},"star_fallback":true,` + file +
			`,"content_usage":{"rules":[],"preferences":{"train-ai":{"pref":"unknown"},"search":{"pref":"unknown"},"ai-input":{"pref":"unknown"}}}` +
			`,"usage":{"purpose":"ai-input","content_usage":"unknown"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			var out bytes.Buffer
			if _, err := check.Run(path, "Googlebot", []string{tt.url}, check.Options{JSON: true, Usage: tt.usage, Stdout: &out}); err != nil {
				t.Fatal(err)
			}
			var got, want map[string]any
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("output %q is not JSON: %v", out.String(), err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Run(-json -usage %q, %q):\ngot  %s\nwant %s", tt.usage, tt.url, out.String(), tt.want)
			}
		})
	}
}

func TestRunUsageText(t *testing.T) {
	path := writeRobots(t, extrasTxt)
	tests := []struct {
		ua, usage string
		urls      []string
		want      []string
	}{
		{"Googlebot", "train-ai", []string{"http://example.com/x", "http://example.com/ai-ok/x", "http://example.com/never/x"}, []string{
			"ALLOWED http://example.com/x\tgroup * (fallback): no matching rule\tusage train-ai=n: line 8: Content-Usage: train-ai=n",
			"ALLOWED http://example.com/ai-ok/x\tgroup * (fallback): no matching rule\tusage train-ai=y: line 9: Content-Usage: /ai-ok/ train-ai=y, search=n",
			"DISALLOWED http://example.com/never/x\tgroup * (fallback): line 7: Disallow: /never/\tusage train-ai=unknown: none for a disallowed URL",
		}},
		{"Googlebot", "search", []string{"http://example.com/x"}, []string{
			"ALLOWED http://example.com/x\tgroup * (fallback): no matching rule\tusage search=unknown\tcontent-signal search=yes: line 6",
		}},
		{"Googlebot", "ai-train", []string{"http://example.com/x"}, []string{
			"ALLOWED http://example.com/x\tgroup * (fallback): no matching rule\tusage ai-train=unknown\tcontent-signal ai-train=no: line 6",
		}},
		{"ExampleBot", "train-ai", []string{"http://example.com/never/x"}, []string{
			"ALLOWED http://example.com/never/x\tgroup examplebot: line 12: Allow: /\tusage train-ai=unknown",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.ua+" "+tt.usage, func(t *testing.T) {
			var out bytes.Buffer
			if _, err := check.Run(path, tt.ua, tt.urls, check.Options{Usage: tt.usage, Stdout: &out}); err != nil {
				t.Fatal(err)
			}
			if got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Run(-usage %s):\ngot  %q\nwant %q", tt.usage, got, tt.want)
			}
		})
	}
}

func TestRunUsageInvalid(t *testing.T) {
	path := writeRobots(t, extrasTxt)
	for _, usage := range []string{"Train-AI", "train ai", "1x", "é"} {
		var out bytes.Buffer
		if _, err := check.Run(path, "Googlebot", []string{"/"}, check.Options{Usage: usage, Stdout: &out}); err == nil || !strings.Contains(err.Error(), "-usage") {
			t.Errorf("-usage %q: got error %v, want one naming -usage", usage, err)
		}
		if out.Len() != 0 {
			t.Errorf("-usage %q: wrote %q", usage, out.String())
		}
	}
}

// TestRunUsageTextTies: among tied rules, the text is that of the rule that
// decided (any "n", else the first "y"), not of the first rule.
func TestRunUsageTextTies(t *testing.T) {
	path := writeRobots(t, "User-agent: *\nContent-Usage: train-ai=y, search=y\nContent-Usage: search=n\nContent-Usage: train-ai=n # c\nContent-Usage: train-ai=y\n")
	tests := []struct{ usage, want string }{
		{"train-ai", "ALLOWED http://example.com/x\tgroup * (fallback): no matching rule\tusage train-ai=n: line 4: Content-Usage: train-ai=n"},
		{"search", "ALLOWED http://example.com/x\tgroup * (fallback): no matching rule\tusage search=n: line 3: Content-Usage: search=n"},
		{"other", "ALLOWED http://example.com/x\tgroup * (fallback): no matching rule\tusage other=unknown"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		if _, err := check.Run(path, "Googlebot", []string{"http://example.com/x"}, check.Options{Usage: tt.usage, Stdout: &out}); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSuffix(out.String(), "\n"); got != tt.want {
			t.Errorf("-usage %s:\ngot  %q\nwant %q", tt.usage, got, tt.want)
		}
	}
}
