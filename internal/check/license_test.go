package check_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/check"
)

func TestRunJSONLicense(t *testing.T) {
	const body = "User-agent: *\nDisallow: /tmp/\nLicense: https://example.com/license.xml\n"
	const rsl = `<rsl><content url="/"><license><prohibits type="usage">ai-train</prohibits></license></content>` +
		`<content url="https://example.com/paid/" server="https://rsl.example/api"/></rsl>`
	tests := []struct {
		name    string
		body    string
		doc     string // "" gives no -license
		usage   string
		url     string
		want    *check.LicenseResult
		wantSHA bool
	}{
		{"no License line", "User-agent: *\nDisallow: /tmp/\n", "", "", "https://example.com/a", nil, false},
		{"License line only", body, "", "", "https://example.com/a", &check.LicenseResult{URL: "https://example.com/license.xml", Line: 3}, false},
		{"prohibited, every purpose", body, rsl, "", "https://example.com/a",
			&check.LicenseResult{URL: "https://example.com/license.xml", Line: 3, Element: `<content url="/">`, Decision: "prohibited",
				Refused: "train-ai", Purposes: []string{"train-ai", "search", "ai-input"}}, true},
		{"permitted for -usage search", body, rsl, "search", "/a",
			&check.LicenseResult{URL: "https://example.com/license.xml", Line: 3, Element: `<content url="/">`, Decision: "permitted",
				Purposes: []string{"search"}}, true},
		{"license server", body, rsl, "search", "https://example.com/paid/x",
			&check.LicenseResult{URL: "https://example.com/license.xml", Line: 3, Element: `<content url="https://example.com/paid/" server="https://rsl.example/api">`,
				Server: "https://rsl.example/api", Decision: "license-required", Purposes: []string{"search"}}, true},
		{"malformed license", body, "<rsl>", "search", "/a",
			&check.LicenseResult{URL: "https://example.com/license.xml", Line: 3, Decision: "unreadable", Purposes: []string{"search"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			robotsPath := filepath.Join(dir, "robots.txt")
			if err := os.WriteFile(robotsPath, []byte(tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			o := check.Options{JSON: true, Usage: tt.usage}
			if tt.doc != "" {
				o.License = filepath.Join(dir, "license.xml")
				if err := os.WriteFile(o.License, []byte(tt.doc), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			o.Stdout = &out
			if _, err := check.Run(robotsPath, "ExampleBot", []string{tt.url}, o); err != nil {
				t.Fatal(err)
			}
			var res check.Result
			if err := json.Unmarshal(out.Bytes(), &res); err != nil {
				t.Fatal(err)
			}
			got := res.License
			if got != nil {
				if (len(got.SHA256) == 64) != tt.wantSHA {
					t.Errorf("sha256 %q", got.SHA256)
				}
				if tt.want != nil && tt.want.Decision == "unreadable" && !strings.Contains(got.Error, "license") {
					t.Errorf("error %q", got.Error)
				}
				got.SHA256, got.Error = "", ""
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("license = %+v, want %+v (%s)", got, tt.want, out.Bytes())
			}
		})
	}
}
