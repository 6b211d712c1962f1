package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeDataDirAndMITMMode: what a user types about HTTPS. -data-dir
// puts the created CA where it says, and a restart reuses it (the key is
// never rewritten); -mitm-mode host-level creates nothing and says what it
// gives up; bad combinations and a missing home are usage errors (exit 2)
// that name the key; ca show never creates a CA.
func TestServeDataDirAndMITMMode(t *testing.T) {
	t.Run("-data-dir, reused on restart", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "rp-state")
		p := startServe(t, t.TempDir(), "-data-dir", dir)
		_, m := startupLine(t, p)
		https, _ := m["https"].(map[string]any)
		if https["ca_cert"] != filepath.Join(dir, "ca.pem") || https["ca_source"] != "data_dir (created)" {
			t.Errorf("startup line https: got %v, want the CA created in %s", https, dir)
		}
		key, err := os.ReadFile(filepath.Join(dir, "ca-key.pem"))
		if err != nil {
			t.Fatal(err)
		}
		p.stop(t)
		p = startServe(t, t.TempDir(), "-data-dir", dir)
		_, m2 := startupLine(t, p)
		https2, _ := m2["https"].(map[string]any)
		if https2["ca_source"] != "data_dir" || https2["sha256"] != https["sha256"] {
			t.Errorf("second start: got %v, want the same CA (sha256 %v) loaded from data_dir", https2, https["sha256"])
		}
		if again, _ := os.ReadFile(filepath.Join(dir, "ca-key.pem")); !bytes.Equal(again, key) {
			t.Error("the second start rewrote the CA key")
		}
		p.stop(t)
	})

	t.Run("-mitm-mode host-level", func(t *testing.T) {
		state := t.TempDir()
		p := startServeIn(t, t.TempDir(), []string{"XDG_STATE_HOME=" + state}, "-mitm-mode", "host-level")
		_, m := startupLine(t, p)
		https, _ := m["https"].(map[string]any)
		if https["mitm_mode"] != "host-level" || !strings.Contains(https["gives_up"].(string), "never checked") || m["ca"] != "off" {
			t.Errorf("startup line: ca %v, https %v; want host-level with what it gives up", m["ca"], https)
		}
		if !strings.Contains(p.stderr.String(), `"level":"warn"`) || !strings.Contains(p.stderr.String(), "host-level decision") {
			t.Errorf("no warning about host-level tunnels; stderr:\n%s", p.stderr)
		}
		if entries, _ := os.ReadDir(state); len(entries) != 0 {
			t.Errorf("host-level created %v in the data directory's parent, want nothing", entries)
		}
		p.stop(t)
	})

	t.Run("usage errors", func(t *testing.T) {
		ca := initCA(t)
		for _, tt := range []struct {
			name string
			env  []string // the whole environment but PATH, when not nil
			args []string
			want string
		}{
			{"unknown mode", nil, []string{"serve", "-mitm-mode", "tunnel"}, "mitm.mode"},
			{"host-level with a CA", nil, []string{"serve", "-mitm-mode", "host-level", "-ca-cert", ca.certFile, "-ca-key", ca.keyFile}, "mitm.mode"},
			{"no home", []string{"PATH=" + os.Getenv("PATH")}, []string{"serve", "-listen", "127.0.0.1:0", "-admin-listen", ""}, "data_dir"},
			{"ca show before the first start", nil, []string{"ca", "show", "-data-dir", t.TempDir()}, "serve creates it there on its first start"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				env := tt.env
				if env == nil {
					env = os.Environ()
				}
				cmd := exec.Command(binary, tt.args...)
				cmd.Dir, cmd.Env = t.TempDir(), env
				out, err := cmd.CombinedOutput()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), tt.want) {
					t.Errorf("robotsproxy %q: %v, output:\n%s\nwant exit 2 naming %q", tt.args, err, out, tt.want)
				}
			})
		}
	})

	t.Run("ca show", func(t *testing.T) {
		ca := initCA(t)
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		for _, tt := range []struct {
			config string
			want   []string
		}{
			{"mitm:\n  ca_cert: " + ca.certFile + "\n  ca_key: " + ca.keyFile + "\n", []string{"CA certificate: " + ca.certFile, "from:           mitm.ca_cert", "curl --cacert " + ca.certFile}},
			{"mitm:\n  mode: host-level\n", []string{"host-level", "never checked"}},
		} {
			if err := os.WriteFile(cfg, []byte(tt.config), 0o600); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := runBinary(t, "", "ca", "show", "-config", cfg)
			for _, w := range tt.want {
				if code != 0 || !strings.Contains(stdout, w) {
					t.Errorf("ca show with %q: exit %d, stdout:\n%s\nstderr: %s\nwant %q", tt.config, code, stdout, stderr, w)
				}
			}
		}
	})
}
