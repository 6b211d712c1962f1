package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDataDirCARace: two serve processes started together on one fresh
// data directory (two replicas on a shared volume, a service manager's
// restart) both start, on one CA that exactly one of them created; round
// after round, with no failure. ROBOTSPROXY_CA_RACE_ROUNDS sets the rounds
// (default 50).
func TestDataDirCARace(t *testing.T) {
	rounds := envInt("ROBOTSPROXY_CA_RACE_ROUNDS", 50)
	for round := range rounds {
		dir := filepath.Join(t.TempDir(), "state", "robotsproxy")
		var procs [2]*caProcess
		for i := range procs {
			procs[i] = startCAProcess(t, dir)
		}
		var prints [2]string
		created := 0
		for i, p := range procs {
			line, err := p.interceptLine(30 * time.Second)
			if err != nil {
				t.Fatalf("round %d, process %d: %v; stderr:\n%s", round, i, err, p.stderr)
			}
			prints[i] = line.SHA256
			if line.Source == "data_dir (created)" {
				created++
			}
		}
		for _, p := range procs {
			p.kill()
		}
		if prints[0] != prints[1] || prints[0] == "" {
			t.Fatalf("round %d: the processes intercept with CAs %q and %q, want one", round, prints[0], prints[1])
		}
		if created != 1 {
			t.Fatalf("round %d: %d processes say they created the CA, want 1", round, created)
		}
	}
	t.Logf("%d rounds of two processes on a fresh data directory: all started, on one CA each round", rounds)
}

// caProcess is a serve process whose only output read is its startup.
type caProcess struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	exited chan struct{}
}

// startCAProcess starts serve on dataDir with the built-in defaults
// (HTTPS intercepted with the data directory's CA), on ephemeral ports.
func startCAProcess(t *testing.T, dataDir string) *caProcess {
	t.Helper()
	return startCAServe(t, "-data-dir", dataDir)
}

// startCAServe starts serve with args and the built-in defaults, on
// ephemeral ports.
func startCAServe(t *testing.T, args ...string) *caProcess {
	t.Helper()
	p := &caProcess{stderr: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(binary, append([]string{"serve", "-listen", "127.0.0.1:0", "-admin-listen", "127.0.0.1:0"}, args...)...)
	p.cmd.Dir, p.cmd.Stderr = t.TempDir(), p.stderr // no config.yaml there: the built-in defaults
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(p.kill)
	return p
}

// interceptLine waits for the startup line that names the CA.
func (p *caProcess) interceptLine(wait time.Duration) (line struct{ Message, SHA256, Source string }, err error) {
	deadline := time.After(wait)
	for {
		for _, l := range p.stderr.lines() {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) != nil {
				continue
			}
			if msg, _ := m["message"].(string); strings.HasPrefix(msg, "intercepting CONNECT tunnels") {
				line.Message = msg
				line.SHA256, _ = m["sha256"].(string)
				line.Source, _ = m["ca_source"].(string)
				return line, nil
			}
		}
		select {
		case <-p.exited:
			return line, &exec.ExitError{ProcessState: p.cmd.ProcessState}
		case <-deadline:
			return line, os.ErrDeadlineExceeded
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (p *caProcess) kill() {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// TestCAKeyPermissions: serve refuses a CA key that others than its owner
// may read, naming the file and the fix, whether the key is the
// operator's (-ca-key) or the data directory's; the same key at 0600
// starts.
func TestCAKeyPermissions(t *testing.T) {
	ca := initCA(t)
	dataDir := filepath.Join(t.TempDir(), "state")
	p := startCAProcess(t, dataDir) // creates the data directory's CA
	if _, err := p.interceptLine(30 * time.Second); err != nil {
		t.Fatalf("first start: %v; stderr:\n%s", err, p.stderr)
	}
	p.kill()
	cases := []struct {
		name, key string
		args      []string
	}{
		{"-ca-key", ca.keyFile, []string{"-ca-cert", ca.certFile, "-ca-key", ca.keyFile}},
		{"data directory", filepath.Join(dataDir, "ca-key.pem"), []string{"-data-dir", dataDir}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, mode := range []os.FileMode{0o644, 0o640, 0o604} {
				if err := os.Chmod(c.key, mode); err != nil {
					t.Fatal(err)
				}
				p := startCAServe(t, c.args...)
				if _, err := p.interceptLine(30 * time.Second); err == nil {
					p.kill()
					t.Errorf("key mode %#o: serve started; want it refused", mode)
					continue
				}
				if code := p.cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(p.stderr.String(), c.key) || !strings.Contains(p.stderr.String(), "chmod 600") {
					t.Errorf("key mode %#o: exit code %d, stderr:\n%s\nwant exit code 2 and an error naming %s and chmod 600", mode, code, p.stderr, c.key)
				}
			}
			if err := os.Chmod(c.key, 0o600); err != nil {
				t.Fatal(err)
			}
			startServe(t, t.TempDir(), c.args...).stop(t)
		})
	}
}
