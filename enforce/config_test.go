package enforce

import (
	"reflect"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/policy"
)

// TestConfigLoadsAsServe: a Config read by LoadConfig or ParseConfig is
// the configuration serve reads from the same file, key for key, and the
// zero Config and DefaultConfig are serve's defaults.
func TestConfigLoadsAsServe(t *testing.T) {
	file, err := LoadConfig("../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := config.LoadFile("../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := file.serve(); !reflect.DeepEqual(got, want) {
		t.Errorf("LoadConfig(config.yaml): got\n%+v\nwant serve's\n%+v", got, want)
	}
	yaml := "mode: report\nallow_private: true\nallow_private_ranges: [10.1.0.0/16]\nexempt_hosts: [.example.com]\n" +
		"allow_hosts: [a.example]\ndeny_hosts: [b.example]\npoliteness:\n  crawl_delay: enforce\n" +
		"usage:\n  purposes:\n    TrainBot: [train-ai]\n"
	parsed, err := ParseConfig(strings.NewReader(yaml))
	if err != nil {
		t.Fatal(err)
	}
	want, err = config.Load(strings.NewReader(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if got := parsed.serve(); !reflect.DeepEqual(got, want) {
		t.Errorf("ParseConfig: got\n%+v\nwant serve's\n%+v", got, want)
	}
	if parsed.Mode != policy.ModeReport || !parsed.AllowPrivate || len(parsed.DenyHosts) != 1 {
		t.Errorf("ParseConfig: fields %+v, want mode report, allow_private and one deny host", parsed)
	}
	for name, c := range map[string]Config{"zero": {}, "DefaultConfig": DefaultConfig()} {
		if got := c.serve(); !reflect.DeepEqual(got, config.Default()) {
			t.Errorf("%s Config: got\n%+v\nwant serve's defaults\n%+v", name, got, config.Default())
		}
	}
}

// TestConfigFieldsWin: fields set in code replace their keys, and the
// file's sections stay.
func TestConfigFieldsWin(t *testing.T) {
	c, err := ParseConfig(strings.NewReader("deny_hosts: [b.example]\npoliteness:\n  crawl_delay: enforce\n"))
	if err != nil {
		t.Fatal(err)
	}
	c.Mode, c.AllowPrivate, c.DenyHosts = policy.ModeReport, true, nil
	got := c.serve()
	if got.Mode != "report" || !got.AllowPrivate || len(got.DenyHosts) != 0 || got.Politeness.CrawlDelay != "enforce" {
		t.Errorf("got mode %q, allow_private %v, deny_hosts %q, politeness.crawl_delay %q; want report, true, none, enforce",
			got.Mode, got.AllowPrivate, got.DenyHosts, got.Politeness.CrawlDelay)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}
