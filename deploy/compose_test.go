package deploy

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// composeFile is the part of a compose file the test reads.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
}

type composeService struct {
	Image      string   `yaml:"image"`
	Build      any      `yaml:"build"`
	Entrypoint []string `yaml:"entrypoint"`
	Volumes    []string `yaml:"volumes"`
	Ports      []string `yaml:"ports"`
	DependsOn  []string `yaml:"depends_on"`
	ReadOnly   bool     `yaml:"read_only"`
	Profiles   []string `yaml:"profiles"`
}

// TestCompose: deploy/compose.yaml runs 3 robotsproxy replicas with a
// configuration the binary accepts, sharing the Valkey service's store
// (shared.redis_url), Valkey, and HAProxy in front of every
// replica (health-checked on /readyz) published on loopback only; every
// file it mounts exists.
func TestCompose(t *testing.T) {
	raw, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	var proxies []string
	for name, s := range c.Services {
		if len(s.Entrypoint) > 1 && strings.HasSuffix(s.Entrypoint[0], "/robotsproxy") && s.Entrypoint[1] == "serve" {
			proxies = append(proxies, name)
			checkComposeProxy(t, name, s, c.Services)
		}
		checkMounts(t, name, s)
		for _, p := range s.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("service %s publishes %q: want it on 127.0.0.1 only", name, p)
			}
		}
	}
	slices.Sort(proxies)
	if want := []string{"proxy1", "proxy2", "proxy3"}; !slices.Equal(proxies, want) {
		t.Fatalf("robotsproxy services: got %q, want %q", proxies, want)
	}
	if v, ok := c.Services["valkey"]; !ok || !strings.Contains(v.Image, "valkey") {
		t.Errorf("valkey service: got %+v, want a valkey image", v)
	}
	lb, ok := c.Services["lb"]
	if !ok || !strings.Contains(lb.Image, "haproxy") {
		t.Fatalf("lb service: got %+v, want an haproxy image", lb)
	}
	if len(lb.Ports) == 0 {
		t.Errorf("lb: publishes no port")
	}
	checkHAProxy(t, proxies)
	checkPrometheusTargets(t, proxies)
	for _, dep := range proxies {
		if !slices.Contains(lb.DependsOn, dep) {
			t.Errorf("lb depends_on %q: want %s in it", lb.DependsOn, dep)
		}
	}
}

// checkComposeProxy checks one replica: built from the repository, a
// read-only root filesystem, the compose configuration mounted where
// -config points, and its shared store a valkey service it depends on.
func checkComposeProxy(t *testing.T, name string, s composeService, services map[string]composeService) {
	t.Helper()
	if !s.ReadOnly {
		t.Errorf("%s: read_only: got false, want true", name)
	}
	build, _ := s.Build.(map[string]any)
	ctx, _ := build["context"].(string)
	if _, err := os.Stat(filepath.Join(ctx, "Dockerfile")); ctx == "" || err != nil {
		t.Errorf("%s: build context %q has no Dockerfile (%v)", name, ctx, err)
	}
	i := slices.Index(s.Entrypoint, "-config")
	if i < 0 || i+1 == len(s.Entrypoint) {
		t.Fatalf("%s: entrypoint %q has no -config FILE", name, s.Entrypoint)
	}
	target := s.Entrypoint[i+1]
	for _, v := range s.Volumes {
		host, ctr, _ := strings.Cut(v, ":")
		if strings.TrimSuffix(ctr, ":ro") != target {
			continue
		}
		raw, err := os.ReadFile(host)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cfg, err := config.Load(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatalf("%s: %s does not load: %v", name, host, err)
		}
		if cfg.Listen != ":8080" || cfg.AdminListen != ":9090" {
			t.Errorf("%s: listen %q, admin_listen %q; want \":8080\", \":9090\" (haproxy.cfg and prometheus.yml use them)", name, cfg.Listen, cfg.AdminListen)
		}
		checkSharedStore(t, name, cfg.Shared.RedisURL, s, services)
		return
	}
	t.Errorf("%s: no volume mounted at %s", name, target)
}

// checkMounts checks that every file a service mounts from the host
// exists.
func checkMounts(t *testing.T, name string, s composeService) {
	t.Helper()
	for _, v := range s.Volumes {
		host, _, _ := strings.Cut(v, ":")
		if !strings.HasPrefix(host, "./") {
			continue
		}
		if _, err := os.Stat(host); err != nil {
			t.Errorf("%s: volume %q: %v", name, v, err)
		}
	}
}

// checkHAProxy: haproxy.cfg sends to every replica's proxy port and checks
// /readyz on its admin port.
func checkHAProxy(t *testing.T, proxies []string) {
	t.Helper()
	raw, err := os.ReadFile("compose/haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(raw)
	for _, p := range proxies {
		if !regexp.MustCompile(`(?m)^\s*server ` + p + ` ` + p + `:8080\b`).MatchString(cfg) {
			t.Errorf("haproxy.cfg: no \"server %s %s:8080\"", p, p)
		}
	}
	for _, want := range []string{"uri /readyz", "check port 9090", "mode tcp"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("haproxy.cfg: want %q", want)
		}
	}
}

// checkPrometheusTargets: Prometheus scrapes every replica's admin port
// and loads the repository's alert rules.
func checkPrometheusTargets(t *testing.T, proxies []string) {
	t.Helper()
	raw, err := os.ReadFile("compose/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(raw, &p); err != nil {
		t.Fatalf("prometheus.yml: %v", err)
	}
	var targets []string
	for _, sc := range p.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			targets = append(targets, st.Targets...)
		}
	}
	for _, px := range proxies {
		if !slices.Contains(targets, px+":9090") {
			t.Errorf("prometheus.yml targets %q: want %s:9090", targets, px)
		}
	}
	if len(p.RuleFiles) == 0 {
		t.Errorf("prometheus.yml: no rule_files")
	}
}

// checkSharedStore: the replica's shared.redis_url names a valkey service
// of the compose file, on Valkey's port, and the replica depends on it.
func checkSharedStore(t *testing.T, name, redisURL string, s composeService, services map[string]composeService) {
	t.Helper()
	u, err := url.Parse(redisURL)
	if err != nil || u.Scheme != "redis" {
		t.Fatalf("%s: shared.redis_url %q: want redis://SERVICE:6379/DB (%v)", name, redisURL, err)
	}
	store, ok := services[u.Hostname()]
	if !ok || !strings.Contains(store.Image, "valkey") || u.Port() != "6379" {
		t.Errorf("%s: shared.redis_url %q: want a valkey service of compose.yaml on port 6379", name, redisURL)
	}
	if !slices.Contains(s.DependsOn, u.Hostname()) {
		t.Errorf("%s: depends_on %q: want %s in it", name, s.DependsOn, u.Hostname())
	}
}
