package server

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"go.yaml.in/yaml/v3"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/mitm"
)

// recordingRegistry is a real registry that also records the name of
// every metric registered on it (CounterVecs without children included,
// which Gather would not show), and whether it is a histogram.
type recordingRegistry struct {
	*prometheus.Registry
	names map[string]bool // name -> histogram
}

var fqNameRE = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *recordingRegistry) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc, 64)
	go func() { c.Describe(ch); close(ch) }()
	var histogram bool
	switch c.(type) {
	case prometheus.Histogram, *prometheus.HistogramVec:
		histogram = true
	}
	for d := range ch {
		if m := fqNameRE.FindStringSubmatch(d.String()); m != nil {
			r.names[m[1]] = histogram
		}
	}
	return r.Registry.Register(c)
}

func (r *recordingRegistry) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// exportedMetrics assembles a server, with interception so that every
// metric exists, and returns the names of its metrics. Histograms add
// their _bucket, _sum and _count series.
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem")
	if _, err := mitm.InitCA(cert, key, mitm.CAOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.MITM.CACert, cfg.MITM.CAKey = cert, key
	reg := &recordingRegistry{Registry: prometheus.NewRegistry(), names: map[string]bool{}}
	s, err := assemble(cfg, io.Discard, zerolog.Nop(), reg)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.closeFn()
	names := map[string]bool{"up": true} // Prometheus's own, per target
	for n, histogram := range reg.names {
		if !histogram {
			names[n] = true
			continue
		}
		for _, sfx := range []string{"_bucket", "_sum", "_count"} {
			names[n+sfx] = true
		}
	}
	return names
}

// metricRE finds metric names in PromQL: the proxy's, the process and Go
// collectors', and up.
var metricRE = regexp.MustCompile(`\b(?:robotsproxy|process|go)_[a-z0-9_]+\b|\bup\b`)

// TestDeployMetricsExist: every metric the alert rules
// (deploy/prometheus/rules.yaml) and the Grafana dashboard
// (deploy/grafana/robotsproxy.json) query is one the server exports, and
// each of the proxy's own metrics is used by one of them.
func TestDeployMetricsExist(t *testing.T) {
	exported := exportedMetrics(t)
	used := map[string][]string{} // metric -> where
	for where, exprs := range map[string][]string{
		"deploy/prometheus/rules.yaml":    ruleExprs(t),
		"deploy/grafana/robotsproxy.json": dashboardExprs(t),
	} {
		if len(exprs) == 0 {
			t.Errorf("%s: no expressions found", where)
		}
		for _, e := range exprs {
			for _, name := range metricRE.FindAllString(e, -1) {
				used[name] = append(used[name], where)
				if !exported[name] {
					t.Errorf("%s: %q queries %s, which the server does not export", where, e, name)
				}
			}
		}
	}
	var unused []string
	for name := range exported {
		if strings.HasPrefix(name, "robotsproxy_") && !strings.HasSuffix(name, "_sum") &&
			!strings.HasSuffix(name, "_count") && used[name] == nil {
			unused = append(unused, name)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("metrics in neither the alerts nor the dashboard: %q", unused)
	}
}

// ruleExprs returns the expr of every rule in rules.yaml.
func ruleExprs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../deploy/prometheus/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("rules.yaml: %v", err)
	}
	var out []string
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("rules.yaml: rule %q: want alert, expr, labels.severity and annotations.summary", r.Alert)
			}
			out = append(out, r.Expr)
		}
	}
	return out
}

// dashboardExprs returns the expr of every panel target of the dashboard.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../deploy/grafana/robotsproxy.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("robotsproxy.json: %v", err)
	}
	if d.UID == "" {
		t.Errorf("robotsproxy.json: no uid")
	}
	var out []string
	for _, p := range d.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("robotsproxy.json: panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	return out
}
