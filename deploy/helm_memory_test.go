package deploy

import (
	"strconv"
	"strings"
	"testing"
)

// TestHelmChartMemory: with a memory limit the container's GOMEMLIMIT is
// that limit in bytes (resourceFieldRef, divisor 1), and with the default
// values the cache bound fits under it with the room the README's sizing
// rule asks for (cache.max_bytes + 64 KiB x client.max_connections +
// 64 MiB); without a memory limit there is no GOMEMLIMIT.
func TestHelmChartMemory(t *testing.T) {
	helm := helmBinary(t)
	cases := []struct {
		name      string
		args      []string
		gomemlim  bool
		checkRoom bool
	}{
		{name: "defaults", gomemlim: true, checkRoom: true},
		{name: "larger limit", args: []string{"--set", "resources.limits.memory=2Gi"}, gomemlim: true},
		{name: "no memory limit", args: []string{"--set", "resources.limits=null"}},
		{name: "cpu limit only", args: []string{"--set", "resources.limits.memory=null,resources.limits.cpu=1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			docs, err := helmTemplate(t, helm, c.args...)
			if err != nil {
				t.Fatalf("helm template: %v", err)
			}
			byKind := map[string][]manifest{}
			for _, d := range docs {
				byKind[d.kind()] = append(byKind[d.kind()], d)
			}
			if len(byKind["Deployment"]) != 1 {
				t.Fatalf("got %d Deployments, want 1", len(byKind["Deployment"]))
			}
			ctr := func(path ...any) any {
				return byKind["Deployment"][0].at(append([]any{"spec", "template", "spec", "containers", 0}, path...)...)
			}
			ref := envFieldRef(ctr("env"), "GOMEMLIMIT")
			if got := ref != nil; got != c.gomemlim {
				t.Fatalf("GOMEMLIMIT set: got %v, want %v (env %v)", got, c.gomemlim, ctr("env"))
			}
			if ref != nil {
				for k, want := range map[string]any{"resource": "limits.memory", "divisor": "1", "containerName": "robotsproxy"} {
					if ref[k] != want {
						t.Errorf("GOMEMLIMIT resourceFieldRef.%s: got %v, want %v", k, ref[k], want)
					}
				}
			}
			if !c.checkRoom {
				return
			}
			limit := parseQuantity(t, ctr("resources", "limits", "memory"))
			cfg := checkRenderedConfig(t, renderedConfig(t, byKind, false))
			need := int64(cfg.Cache.MaxBytes) + 64<<10*int64(cfg.Client.MaxConnections) + 64<<20
			if need > limit {
				t.Errorf("cache.max_bytes %d + 64 KiB x client.max_connections %d + 64 MiB = %d: want at most limits.memory %d",
					cfg.Cache.MaxBytes, cfg.Client.MaxConnections, need, limit)
			}
		})
	}
}

// envFieldRef returns the resourceFieldRef of the container env entry
// named name, or nil.
func envFieldRef(env any, name string) map[string]any {
	list, _ := env.([]any)
	for _, e := range list {
		m, _ := e.(map[string]any)
		if m["name"] != name {
			continue
		}
		ref, _ := manifest(m).at("valueFrom", "resourceFieldRef").(map[string]any)
		return ref
	}
	return nil
}

// parseQuantity reads a Kubernetes memory quantity: an integer with an
// optional Ki, Mi, Gi, Ti, k, M, G or T suffix, in bytes.
func parseQuantity(t *testing.T, q any) int64 {
	t.Helper()
	s, _ := q.(string)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = n, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		t.Fatalf("memory limit %v: want a positive integer quantity", q)
	}
	return n * mult
}
