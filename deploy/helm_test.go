package deploy

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/keyfile"
	"github.com/robotsproxy/robotsproxy/internal/mitm"
)

const chartDir = "helm/robotsproxy"

// exampleHash is the bcrypt hash of "example-password" (as in
// ci/users-values.yaml).
const exampleHash = "$2a$10$6.wMXuW5l77scsFPAXJ8U.O9Vqe02qxKQAHjliR7fQ7zvtmQuHY1."

// helmBinary returns the helm executable: $HELM (which must exist when
// set, as .ci/run sets it), else helm on PATH or in $GOPATH/bin; the test
// is skipped without one.
func helmBinary(t *testing.T) string {
	t.Helper()
	if h := os.Getenv("HELM"); h != "" {
		if _, err := os.Stat(h); err != nil {
			t.Fatalf("HELM=%s: %v", h, err)
		}
		return h
	}
	if h, err := exec.LookPath("helm"); err == nil {
		return h
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		h := filepath.Join(strings.TrimSpace(string(out)), "bin", "helm")
		if _, err := os.Stat(h); err == nil {
			return h
		}
	}
	t.Skip("SKIPPED: helm not found (set HELM; .ci/run installs it)")
	return ""
}

// manifest is one rendered Kubernetes object, as a generic tree.
type manifest map[string]any

func (m manifest) kind() string { s, _ := m["kind"].(string); return s }

// at follows keys (string) and list indexes (int) through m.
func (m manifest) at(path ...any) any {
	var cur any = map[string]any(m)
	for _, p := range path {
		switch k := p.(type) {
		case string:
			mm, _ := cur.(map[string]any)
			cur = mm[k]
		case int:
			l, _ := cur.([]any)
			if k >= len(l) {
				return nil
			}
			cur = l[k]
		}
	}
	return cur
}

// helmTemplate renders the chart with args; it returns the objects or
// helm's error output.
func helmTemplate(t *testing.T, helm string, args ...string) ([]manifest, error) {
	t.Helper()
	cmd := exec.Command(helm, append([]string{"template", "rp", chartDir, "--kube-version", "1.30.0"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.New(stderr.String())
	}
	var docs []manifest
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var m map[string]any // nested maps decode as map[string]any too
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("helm template %q: output is not YAML: %v", args, err)
		}
		if m != nil {
			docs = append(docs, manifest(m))
		}
	}
	return docs, nil
}

// TestHelmChart: the chart renders, with each set of values, the objects
// the values ask for; its config.yaml loads with the binary's own loader;
// the pod runs non-root on a read-only root filesystem with probes on
// /healthz and /readyz; and it refuses to render an open proxy.
func TestHelmChart(t *testing.T) {
	helm := helmBinary(t)
	cases := []struct {
		name      string
		args      []string
		kinds     []string // present
		absent    []string
		inSecret  bool
		replicas  any  // Deployment spec.replicas; nil: left to the HPA
		hostLevel bool // mitm.mode host-level, no CA mounted
	}{
		// The defaults intercept HTTPS with a CA the chart generates.
		{name: "defaults", kinds: []string{"Deployment", "Service", "ConfigMap", "HorizontalPodAutoscaler",
			"PodDisruptionBudget", "NetworkPolicy", "ServiceAccount", "Secret"}, absent: []string{"ServiceMonitor"}},
		// Opting out of interception is explicit.
		{name: "no CA, host-level", args: []string{"--set", "ca.generate=false"},
			kinds: []string{"ConfigMap"}, absent: []string{"Secret"}, hostLevel: true},
		{name: "users, client ranges and a CA Secret", args: []string{"-f", chartDir + "/ci/users-values.yaml"},
			kinds: []string{"Deployment", "Secret"}, absent: []string{"ConfigMap", "NetworkPolicy", "HorizontalPodAutoscaler"},
			inSecret: true, replicas: 3},
		{name: "inline CA", args: []string{"--set", "ca.cert=CERT,ca.key=KEY"}, kinds: []string{"Secret", "ConfigMap"}},
		{name: "open, monitored, shared store", args: []string{"-f", chartDir + "/ci/open-values.yaml"},
			kinds: []string{"ServiceMonitor", "ConfigMap"}, absent: []string{"NetworkPolicy"}},
		// bcrypt hashes given as config.identity.users are secrets too.
		{name: "users in config.identity", args: []string{
			"--set-string", "config.identity.users[0].name=partner-bot",
			"--set-string", "config.identity.users[0].password_bcrypt=" + exampleHash,
			"--set-string", "config.identity.users[0].token=PartnerBot"},
			kinds: []string{"Secret"}, absent: []string{"ConfigMap"}, inSecret: true},
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
			for _, k := range c.kinds {
				if len(byKind[k]) == 0 {
					t.Errorf("no %s rendered", k)
				}
			}
			for _, k := range c.absent {
				if len(byKind[k]) != 0 {
					t.Errorf("%s rendered, want none", k)
				}
			}
			if len(byKind["Deployment"]) != 1 {
				t.Fatalf("got %d Deployments, want 1", len(byKind["Deployment"]))
			}
			dep := byKind["Deployment"][0]
			if got := dep.at("spec", "replicas"); got != c.replicas {
				t.Errorf("Deployment replicas: got %v, want %v", got, c.replicas)
			}
			checkPod(t, dep, c.inSecret)
			cfg := checkRenderedConfig(t, renderedConfig(t, byKind, c.inSecret))
			checkInterception(t, cfg, byKind, c.hostLevel)
		})
	}
}

// checkPod checks the pod's security settings, probes and config volume.
func checkPod(t *testing.T, dep manifest, inSecret bool) {
	t.Helper()
	pod := func(path ...any) any { return dep.at(append([]any{"spec", "template", "spec"}, path...)...) }
	ctr := func(path ...any) any { return pod(append([]any{"containers", 0}, path...)...) }
	checks := []struct {
		what string
		got  any
		want any
	}{
		{"runAsNonRoot", pod("securityContext", "runAsNonRoot"), true},
		{"readOnlyRootFilesystem", ctr("securityContext", "readOnlyRootFilesystem"), true},
		{"allowPrivilegeEscalation", ctr("securityContext", "allowPrivilegeEscalation"), false},
		{"readiness probe", ctr("readinessProbe", "httpGet", "path"), "/readyz"},
		{"liveness probe", ctr("livenessProbe", "httpGet", "path"), "/healthz"},
		{"probe port", ctr("readinessProbe", "httpGet", "port"), "admin"},
		{"config from a Secret", pod("volumes", 0, "secret") != nil, inSecret},
		{"checksum annotation", dep.at("spec", "template", "metadata", "annotations", "checksum/config") != nil, true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
		}
	}
}

// checkInterception checks that the rendered configuration intercepts
// HTTPS with a CA Secret's tls.crt and tls.key that the CA loader takes,
// or, for hostLevel, says mitm.mode host-level with no CA.
func checkInterception(t *testing.T, cfg config.Config, byKind map[string][]manifest, hostLevel bool) {
	t.Helper()
	if hostLevel {
		if cfg.MITM.Mode != config.MITMHostLevel || cfg.MITM.CACert != "" {
			t.Errorf("mitm: mode %q ca_cert %q; want host-level and no CA", cfg.MITM.Mode, cfg.MITM.CACert)
		}
		return
	}
	if cfg.MITM.Mode != config.MITMIntercept || cfg.MITM.CACert == "" || cfg.MITM.CAKey == "" {
		t.Errorf("mitm: mode %q ca_cert %q ca_key %q; want intercept with the mounted CA", cfg.MITM.Mode, cfg.MITM.CACert, cfg.MITM.CAKey)
	}
	checkCAKeyMode(t, byKind["Deployment"][0], cfg.MITM.CAKey)
	for _, m := range byKind["Secret"] {
		if m.at("type") != "kubernetes.io/tls" {
			continue
		}
		crt, _ := m.at("data", "tls.crt").(string)
		key, _ := m.at("data", "tls.key").(string)
		if crt == "" || key == "" {
			t.Fatalf("CA Secret without tls.crt or tls.key")
		}
		if crt == base64.StdEncoding.EncodeToString([]byte("CERT")) {
			return // the inline placeholder of the "inline CA" case
		}
		dir := t.TempDir()
		for name, b64 := range map[string]string{"ca.pem": crt, "ca-key.pem": key} {
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), raw, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := mitm.LoadCA(filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem")); err != nil {
			t.Errorf("the chart's CA does not load: %v", err)
		}
		return
	}
	if len(byKind["Secret"]) > 0 || cfg.MITM.CACert != "" {
		// users-values.yaml names an existing Secret, which is not rendered.
		return
	}
	t.Error("no CA Secret rendered")
}

// checkCAKeyMode checks that serve takes the CA key file as the pod
// mounts it: the kubelet writes a Secret volume's files owned by root,
// with the volume's defaultMode, and with an fsGroup gives that group read
// access (mode | 0440) and the files; the process (runAsUser, not root)
// reads the key through the group. keyfile.CheckMode refuses a key others
// may read, as Kubernetes' own default mode 0644 would have it.
func checkCAKeyMode(t *testing.T, dep manifest, keyFile string) {
	t.Helper()
	pod := func(path ...any) any { return dep.at(append([]any{"spec", "template", "spec"}, path...)...) }
	if uid, _ := pod("securityContext", "runAsUser").(int); uid == 0 {
		t.Errorf("runAsUser %v: want a user other than root, which the Secret's files belong to", pod("securityContext", "runAsUser"))
	}
	vols, _ := pod("volumes").([]any)
	for _, v := range vols {
		vol, _ := v.(map[string]any)
		if vol["name"] != "ca" {
			continue
		}
		mode, ok := manifest(vol).at("secret", "defaultMode").(int)
		if !ok {
			t.Fatalf("CA volume: no secret.defaultMode (Kubernetes' default 0644 lets others read the key): %v", vol)
		}
		perm := os.FileMode(mode)
		if pod("securityContext", "fsGroup") != nil {
			perm |= 0o440
		}
		if err := keyfile.ModeError(keyFile, perm, false); err != nil {
			t.Errorf("CA volume defaultMode %#o: serve refuses the key: %v", mode, err)
		}
		return
	}
	t.Error("no volume named ca")
}

// renderedConfig returns config.yaml from the ConfigMap or the Secret.
func renderedConfig(t *testing.T, byKind map[string][]manifest, inSecret bool) string {
	t.Helper()
	if !inSecret {
		for _, m := range byKind["ConfigMap"] {
			if s, ok := m.at("data", "config.yaml").(string); ok {
				return s
			}
		}
		t.Fatal("no ConfigMap with config.yaml")
	}
	for _, m := range byKind["Secret"] {
		if s, ok := m.at("data", "config.yaml").(string); ok {
			raw, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				t.Fatal(err)
			}
			return string(raw)
		}
	}
	t.Fatal("no Secret with config.yaml")
	return ""
}

// checkRenderedConfig loads config.yaml with the binary's loader.
func checkRenderedConfig(t *testing.T, text string) config.Config {
	t.Helper()
	cfg, err := config.Load(strings.NewReader(text))
	if err != nil {
		t.Fatalf("rendered config.yaml does not load: %v\n%s", err, text)
	}
	if cfg.Listen != ":8080" || cfg.AdminListen != ":9090" || !cfg.AllowOpenProxy {
		t.Errorf("rendered config: listen %q admin_listen %q allow_open_proxy %v; want \":8080\" \":9090\" true",
			cfg.Listen, cfg.AdminListen, cfg.AllowOpenProxy)
	}
	return cfg
}

// TestHelmChartRefusesOpenProxy: with nothing guarding the proxy port (no
// pinned identities, no NetworkPolicy, no allowOpenProxy) rendering fails
// with the reason; a pinned client range is enough.
func TestHelmChartRefusesOpenProxy(t *testing.T) {
	helm := helmBinary(t)
	cases := []struct {
		name string
		args []string
		fail bool
	}{
		{"nothing guards it", []string{"--set", "networkPolicy.enabled=false"}, true},
		{"client range pinned", []string{"--set", "networkPolicy.enabled=false",
			"--set", "config.identity.client_ranges[0].cidr=10.0.0.0/8,config.identity.client_ranges[0].token=SandboxBot"}, false},
		{"operator guards it", []string{"--set", "networkPolicy.enabled=false,allowOpenProxy=true"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := helmTemplate(t, helm, c.args...)
			switch {
			case c.fail && (err == nil || !strings.Contains(err.Error(), "open proxy")):
				t.Errorf("helm template: got error %v, want one saying it would be an open proxy", err)
			case !c.fail && err != nil:
				t.Errorf("helm template: got error %v, want none", err)
			}
		})
	}
}
