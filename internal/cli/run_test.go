package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/robotsproxy/robotsproxy/internal/build"
	"github.com/robotsproxy/robotsproxy/internal/cli/command"
	"github.com/robotsproxy/robotsproxy/internal/config"
)

func TestRunUsageErrors(t *testing.T) {
	dir := t.TempDir()
	robots := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nDisallow: /private/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("admin_listen: \"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string // in what exitCode prints
	}{
		{"check without arguments", []string{"check"}, "ROBOTS_FILE USER_AGENT URL"},
		{"check without URL", []string{"check", robots, "Bot"}, "ROBOTS_FILE USER_AGENT URL"},
		{"check -json without URL", []string{"check", "-json", robots, "Bot"}, "ROBOTS_FILE USER_AGENT URL"},
		{"check unknown flag", []string{"check", "-xml", robots, "Bot", "/"}, "-xml"},
		{"check missing robots file", []string{"check", filepath.Join(dir, "missing.txt"), "Bot", "/"}, "missing.txt"},
		{"serve unknown flag", []string{"serve", "-port", "80"}, "-port"},
		{"unknown flag without subcommand", []string{"-verbose"}, "-verbose"},
		{"unknown subcommand", []string{"frobnicate"}, "frobnicate"},
		{"serve extra argument", []string{"serve", "-config", cfg, "extra"}, "extra"},
		{"serve flag without value", []string{"serve", "-listen"}, "listen"},
		{"serve bad -listen", []string{"serve", "-config", cfg, "-listen", "nohost"}, "listen"},
		{"serve bad -admin-listen", []string{"serve", "-config", cfg, "-admin-listen", "9090"}, "admin_listen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
			var printed bytes.Buffer
			if got := exitCode(err, &printed); got != 2 {
				t.Fatalf("run(%q): got exit code %d (error %v), want 2", tt.args, got, err)
			}
			if msg := printed.String() + stderr.String(); !strings.Contains(msg, tt.want) {
				t.Errorf("run(%q): got message %q, want it to contain %q", tt.args, msg, tt.want)
			}
		})
	}
}

func TestRunHelp(t *testing.T) {
	var stdout bytes.Buffer
	err := run(context.Background(), []string{"help"}, strings.NewReader(""), &stdout, io.Discard)
	if code := exitCode(err, io.Discard); code != 0 {
		t.Fatalf("run(help): got exit code %d (error %v), want 0", code, err)
	}
	for _, want := range []string{"usage:", "robotsproxy serve [-config FILE] [-listen HOST:PORT] [-admin-listen HOST:PORT] [-allow-private]", "robotsproxy check [-json] [-rfc] [-usage PURPOSE] [-license FILE] ROBOTS_FILE USER_AGENT URL..."} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("run(help): got stdout %q, want it to contain %q", stdout.String(), want)
		}
	}
}

func TestRunServeConfigErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name string
		path string
		want []string
	}{
		{"nonexistent explicit config", filepath.Join(dir, "nope.yaml"), []string{"nope.yaml"}},
		{"out of range", write("ttl.yaml", "cache:\n  max_ttl: 48h\n"), []string{"ttl.yaml", "cache.max_ttl"}},
		{"unknown key", write("key.yaml", "robots:\n  timeoutt: 5s\n"), []string{"key.yaml", "robots.timeoutt"}},
		{"syntax error", write("syntax.yaml", "listen: [\n"), []string{"syntax.yaml", "line 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"serve", "-config", tt.path, "-listen", "127.0.0.1:0", "-admin-listen", ""}
			err := run(context.Background(), args, nil, io.Discard, io.Discard)
			var printed bytes.Buffer
			if got := exitCode(err, &printed); got != 2 {
				t.Fatalf("run(%q): got exit code %d (error %v), want 2", args, got, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(printed.String(), w) {
					t.Errorf("run(%q): got message %q, want it to contain %q", args, printed.String(), w)
				}
			}
		})
	}
}

// TestRunServeStopsWithContext starts serve on ephemeral ports with a
// context that is already cancelled: it must listen, then shut down
// cleanly and return nil (exit code 0).
func TestRunServeStopsWithContext(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("shutdown_timeout: 2s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	args := []string{"serve", "-config", cfg, "-listen", "127.0.0.1:0", "-admin-listen", "127.0.0.1:0"}
	err := run(ctx, args, nil, &stdout, &stderr)
	if code := exitCode(err, io.Discard); code != 0 {
		t.Fatalf("run(%q) with a cancelled context: got exit code %d (error %v), want 0; stderr:\n%s", args, code, err, stderr.String())
	}
	for _, want := range []string{`"listener":"proxy"`, `"listener":"admin"`, `"message":"listening"`, `"message":"shutting down"`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("run(%q): got stderr %q, want it to contain %q", args, stderr.String(), want)
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("run(%q): got stdout %q, want no audit lines without requests", args, stdout.String())
	}
}

func TestRunCheckExitCodes(t *testing.T) {
	robots := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nDisallow: /private/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  int
		out   string
	}{
		{"all allowed", []string{"check", robots, "Bot", "http://e.com/a", "http://e.com/b"}, "", 0, "ALLOWED http://e.com/a\t"},
		{"one disallowed", []string{"check", robots, "Bot", "http://e.com/a", "http://e.com/private/x"}, "", 1, "DISALLOWED http://e.com/private/x\t"},
		{"json disallowed", []string{"check", "-json", robots, "Bot", "http://e.com/private/x"}, "", 1, `"allowed":false`},
		{"stdin all allowed", []string{"check", robots, "Bot", "-"}, "/a\n/b\n", 0, "ALLOWED /b\t"},
		{"stdin one disallowed", []string{"check", robots, "Bot", "-"}, "/a\n/private/\n", 1, "DISALLOWED /private/\t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, printed bytes.Buffer
			err := run(context.Background(), tt.args, strings.NewReader(tt.stdin), &stdout, io.Discard)
			if got := exitCode(err, &printed); got != tt.want {
				t.Errorf("run(%q) stdin %q: got exit code %d (error %v), want %d", tt.args, tt.stdin, got, err, tt.want)
			}
			if printed.Len() != 0 {
				t.Errorf("run(%q): got %q printed for the exit code, want nothing", tt.args, printed.String())
			}
			if !strings.Contains(stdout.String(), tt.out) {
				t.Errorf("run(%q) stdin %q: got stdout %q, want it to contain %q", tt.args, tt.stdin, stdout.String(), tt.out)
			}
		})
	}
}

func TestRunCAInit(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem")
	var stdout, stderr bytes.Buffer
	args := []string{"ca", "init", "-cert", certFile, "-key", keyFile, "-name", "Test Operator"}
	err := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	if code := exitCode(err, io.Discard); code != 0 {
		t.Fatalf("run(%q): got exit code %d (error %v), want 0; stderr:\n%s", args, code, err, stderr.String())
	}

	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatalf("certificate file: %v", err)
	}
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("%s: got %q, want a PEM CERTIFICATE", certFile, certPEM)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !cert.IsCA || !strings.Contains(cert.Subject.CommonName, "Test Operator") {
		t.Errorf("certificate: got IsCA %v Subject %q, want a CA whose common name has the -name", cert.IsCA, cert.Subject)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatalf("key file: %v", err)
	}
	if kb, _ := pem.Decode(keyPEM); kb == nil || kb.Type != "PRIVATE KEY" {
		t.Errorf("%s: want a PEM PRIVATE KEY", keyFile)
	} else if _, err := x509.ParsePKCS8PrivateKey(kb.Bytes); err != nil {
		t.Errorf("%s: %v", keyFile, err)
	}
	for _, f := range []struct {
		path string
		mode os.FileMode
	}{{keyFile, 0o600}, {certFile, 0o644}} {
		fi, err := os.Stat(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != f.mode {
			t.Errorf("%s: got mode %v, want %v", f.path, got, f.mode)
		}
	}

	sum := sha256.Sum256(cert.Raw)
	fp := strings.ToUpper(hex.EncodeToString(sum[:]))
	out := stdout.String()
	for _, want := range []string{certFile, keyFile, "subject: ", cert.Subject.String(), "sha256: ", fp[:2] + ":" + fp[2:4], "0600"} {
		if !strings.Contains(out, want) {
			t.Errorf("run(%q): got stdout %q, want it to contain %q", args, out, want)
		}
	}
	var colons []string
	for i := 0; i < len(fp); i += 2 {
		colons = append(colons, fp[i:i+2])
	}
	if want := "sha256: " + strings.Join(colons, ":"); !strings.Contains(out, want) {
		t.Errorf("run(%q): got stdout %q, want the certificate's fingerprint %q", args, out, want)
	}
	if strings.Contains(out, "PRIVATE KEY") || strings.Contains(stderr.String(), "PRIVATE KEY") {
		t.Errorf("run(%q): printed the private key", args)
	}
}

func TestRunCAInitErrors(t *testing.T) {
	tests := []struct {
		name     string
		existing map[string]string // file name -> content, present before
		args     func(dir string) []string
		want     []string // in what exitCode prints or on stderr
	}{
		{name: "no subcommand", args: func(string) []string { return []string{"ca"} }, want: []string{"ca init"}},
		{name: "unknown subcommand", args: func(d string) []string { return []string{"ca", "create", "-cert", d + "/c", "-key", d + "/k"} }, want: []string{"ca init"}},
		{name: "missing -key", args: func(d string) []string { return []string{"ca", "init", "-cert", d + "/ca.pem"} }, want: []string{"-key"}},
		{name: "missing -cert", args: func(d string) []string { return []string{"ca", "init", "-key", d + "/key.pem"} }, want: []string{"-cert"}},
		{name: "empty -key", args: func(d string) []string { return []string{"ca", "init", "-cert", d + "/ca.pem", "-key", ""} }, want: []string{"-key"}},
		{name: "no flags", args: func(string) []string { return []string{"ca", "init"} }, want: []string{"-cert FILE -key FILE"}},
		{name: "extra argument", args: func(d string) []string {
			return []string{"ca", "init", "-cert", d + "/ca.pem", "-key", d + "/key.pem", "extra"}
		}, want: []string{"-cert FILE"}},
		{name: "unknown flag", args: func(d string) []string {
			return []string{"ca", "init", "-cert", d + "/ca.pem", "-key", d + "/key.pem", "-days", "3"}
		}, want: []string{"-days"}},
		{name: "same file", args: func(d string) []string {
			return []string{"ca", "init", "-cert", d + "/both.pem", "-key", d + "/both.pem"}
		}, want: []string{"both.pem"}},
		{name: "missing directory", args: func(d string) []string {
			return []string{"ca", "init", "-cert", d + "/no/ca.pem", "-key", d + "/no/key.pem"}
		}, want: []string{"no/"}},
		{name: "certificate exists", existing: map[string]string{"ca.pem": "old certificate"},
			args: func(d string) []string { return []string{"ca", "init", "-cert", d + "/ca.pem", "-key", d + "/key.pem"} }, want: []string{"ca.pem", "exists"}},
		{name: "key exists", existing: map[string]string{"key.pem": "old key"},
			args: func(d string) []string { return []string{"ca", "init", "-cert", d + "/ca.pem", "-key", d + "/key.pem"} }, want: []string{"key.pem", "exists"}},
		{name: "both exist", existing: map[string]string{"ca.pem": "old certificate", "key.pem": "old key"},
			args: func(d string) []string { return []string{"ca", "init", "-cert", d + "/ca.pem", "-key", d + "/key.pem"} }, want: []string{"exists"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.existing {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := tt.args(dir)
			var stdout, stderr, printed bytes.Buffer
			err := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
			if code := exitCode(err, &printed); code != 2 {
				t.Fatalf("run(%q): got exit code %d (error %v), want 2", args, code, err)
			}
			msg := printed.String() + stderr.String()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("run(%q): got message %q, want it to contain %q", args, msg, w)
				}
			}
			if stdout.Len() != 0 {
				t.Errorf("run(%q): got stdout %q, want nothing", args, stdout.String())
			}
			// Existing files are unchanged and no new file is left behind.
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != len(tt.existing) {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("run(%q): directory holds %q afterwards, want only the %d files there before", args, names, len(tt.existing))
			}
			for name, content := range tt.existing {
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || string(got) != content {
					t.Errorf("run(%q): %s now holds %q (%v), want it unchanged %q", args, name, got, err, content)
				}
			}
		})
	}
}

func TestRunHashPassword(t *testing.T) {
	tests := []struct {
		name         string
		args         []string
		stdin        string
		wantPassword string // the password the hash must accept
		wantCost     int
	}{
		{"cost 4", []string{"-cost", "4"}, "s3cret\n", "s3cret", 4},
		{"cost 5", []string{"-cost=5"}, "s3cret\n", "s3cret", 5},
		{"default cost", nil, "s3cret\n", "s3cret", bcrypt.DefaultCost},
		{"no newline", []string{"-cost", "4"}, "s3cret", "s3cret", 4},
		{"CRLF", []string{"-cost", "4"}, "s3cret\r\n", "s3cret", 4},
		{"first line only", []string{"-cost", "4"}, "first\nsecond\n", "first", 4},
		{"spaces kept", []string{"-cost", "4"}, "  pass word  \n", "  pass word  ", 4},
		{"colon and unicode", []string{"-cost", "4"}, "pä:ss\n", "pä:ss", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"hash-password"}, tt.args...)
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), args, strings.NewReader(tt.stdin), &stdout, &stderr)
			if code := exitCode(err, io.Discard); code != 0 {
				t.Fatalf("run(%q) stdin %q: got exit code %d (error %v), want 0; stderr %q", args, tt.stdin, code, err, stderr.String())
			}
			out := stdout.String()
			if !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
				t.Errorf("run(%q): got stdout %q, want one line", args, out)
			}
			hash := []byte(strings.TrimSuffix(out, "\n"))
			if err := bcrypt.CompareHashAndPassword(hash, []byte(tt.wantPassword)); err != nil {
				t.Errorf("run(%q) stdin %q: hash %q does not accept %q: %v", args, tt.stdin, hash, tt.wantPassword, err)
			}
			if err := bcrypt.CompareHashAndPassword(hash, []byte(tt.wantPassword+"x")); err == nil {
				t.Errorf("run(%q): hash %q accepts another password", args, hash)
			}
			if cost, err := bcrypt.Cost(hash); err != nil || cost != tt.wantCost {
				t.Errorf("run(%q): got hash cost %d (%v), want %d", args, cost, err, tt.wantCost)
			}
			if strings.Contains(out+stderr.String(), tt.wantPassword) && strings.TrimSpace(tt.wantPassword) != "" {
				t.Errorf("run(%q): printed the password", args)
			}
			// The hash is what identity.users[i].password_bcrypt accepts.
			cfg := config.Default()
			cfg.Identity.Users = []config.UserRule{{Name: "u", PasswordBcrypt: string(hash), Token: "Bot"}}
			if err := cfg.Validate(); err != nil {
				t.Errorf("config with the printed hash: %v", err)
			}
		})
	}
}

func TestRunHashPasswordErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"empty stdin", nil, "", "password"},
		{"empty line", []string{"-cost", "4"}, "\n", "password"},
		{"CRLF only", []string{"-cost", "4"}, "\r\n", "password"},
		{"empty first line", []string{"-cost", "4"}, "\nsecret\n", "password"},
		{"cost too low", []string{"-cost", "3"}, "secret\n", "cost"},
		{"cost zero", []string{"-cost", "0"}, "secret\n", "cost"},
		{"cost too high", []string{"-cost", "32"}, "secret\n", "cost"},
		{"cost not a number", []string{"-cost", "high"}, "secret\n", "cost"},
		{"unknown flag", []string{"-rounds", "4"}, "secret\n", "rounds"},
		{"password as argument", []string{"secret"}, "other\n", "stdin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"hash-password"}, tt.args...)
			var stdout, stderr, printed bytes.Buffer
			err := run(context.Background(), args, strings.NewReader(tt.stdin), &stdout, &stderr)
			if code := exitCode(err, &printed); code != 2 {
				t.Fatalf("run(%q) stdin %q: got exit code %d (error %v, stdout %q), want 2", args, tt.stdin, code, err, stdout.String())
			}
			if msg := printed.String() + stderr.String(); !strings.Contains(msg, tt.want) {
				t.Errorf("run(%q): got message %q, want it to contain %q", args, msg, tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("run(%q): got stdout %q, want nothing", args, stdout.String())
			}
		})
	}
}

// TestRunServeCAFlags checks -ca-cert and -ca-key: both or neither, and
// files that must exist; all are exit code 2 before anything listens.
func TestRunServeCAFlags(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("admin_listen: \"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bothCfg := filepath.Join(dir, "both.yaml")
	if err := os.WriteFile(bothCfg, []byte("admin_listen: \"\"\nmitm:\n  ca_cert: "+filepath.Join(dir, "cfg-ca.pem")+"\n  ca_key: "+filepath.Join(dir, "cfg-key.pem")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	halfCfg := filepath.Join(dir, "half.yaml")
	if err := os.WriteFile(halfCfg, []byte("mitm:\n  ca_cert: ca.pem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missingCert, missingKey := filepath.Join(dir, "missing-ca.pem"), filepath.Join(dir, "missing-key.pem")
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"only -ca-cert", []string{"-config", cfg, "-ca-cert", missingCert}, []string{"mitm"}},
		{"only -ca-key", []string{"-config", cfg, "-ca-key", missingKey}, []string{"mitm"}},
		{"-ca-cert overriding a config with both", []string{"-config", bothCfg, "-ca-cert", missingCert}, []string{"mitm"}},
		{"half-set in the config file", []string{"-config", halfCfg}, []string{"half.yaml", "mitm"}},
		{"missing CA files", []string{"-config", cfg, "-ca-cert", missingCert, "-ca-key", missingKey}, []string{"missing-ca.pem"}},
		{"missing CA files from the config", []string{"-config", bothCfg}, []string{"cfg-ca.pem"}},
		{"CA file that is not PEM", []string{"-config", cfg, "-ca-cert", notPEM, "-ca-key", notPEM}, []string{"not.pem"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"serve", "-listen", "127.0.0.1:0", "-admin-listen", ""}, tt.args...)
			var stdout, stderr, printed bytes.Buffer
			err := run(context.Background(), args, nil, &stdout, &stderr)
			if code := exitCode(err, &printed); code != 2 {
				t.Fatalf("run(%q): got exit code %d (error %v), want 2; stderr:\n%s", args, code, err, stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(printed.String(), w) {
					t.Errorf("run(%q): got message %q, want it to contain %q", args, printed.String(), w)
				}
			}
			if strings.Contains(stderr.String(), `"message":"listening"`) {
				t.Errorf("run(%q): listened before failing; stderr:\n%s", args, stderr.String())
			}
		})
	}
}

// TestRunServeWithCA starts serve with a CA made by "ca init" and a
// cancelled context: it must load the CA, listen and stop cleanly.
func TestRunServeWithCA(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "key.pem")
	if err := run(context.Background(), []string{"ca", "init", "-cert", certFile, "-key", keyFile}, nil, io.Discard, io.Discard); err != nil {
		t.Fatalf("ca init: %v", err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("shutdown_timeout: 2s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stderr bytes.Buffer
	args := []string{"serve", "-config", cfg, "-listen", "127.0.0.1:0", "-admin-listen", "", "-ca-cert", certFile, "-ca-key", keyFile}
	err := run(ctx, args, nil, io.Discard, &stderr)
	if code := exitCode(err, io.Discard); code != 0 {
		t.Fatalf("run(%q): got exit code %d (error %v), want 0; stderr:\n%s", args, code, err, stderr.String())
	}
	for _, want := range []string{"intercepting CONNECT tunnels", `"message":"listening"`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("run(%q): got stderr %q, want it to contain %q", args, stderr.String(), want)
		}
	}
}

func TestRunHelpNewCommands(t *testing.T) {
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"help"}, nil, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"robotsproxy ca init -cert FILE -key FILE [-name NAME]", "robotsproxy keys init [-valid DURATION] DIR", "robotsproxy hash-password [-cost N]", "-ca-cert FILE -ca-key FILE"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("run(help): got %q, want it to contain %q", stdout.String(), want)
		}
	}
}

// TestRunServeFlagsCompleteTheFile: flags are applied before the
// configuration is validated, so a flag can make a file valid:
// -allow-open-proxy for a file listening beyond loopback with nobody
// pinned, or -listen moving that file's listener to loopback.
func TestRunServeFlagsCompleteTheFile(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "open.yaml")
	if err := os.WriteFile(cfg, []byte("listen: 0.0.0.0:0\nadmin_listen: \"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // listen, then stop at once
	for _, args := range [][]string{
		{"serve", "-config", cfg, "-allow-open-proxy"},
		{"serve", "-config", cfg, "-listen", "127.0.0.1:0"},
	} {
		var stderr bytes.Buffer
		if code := exitCode(run(ctx, args, nil, io.Discard, &stderr), io.Discard); code != 0 {
			t.Errorf("run(%q): exit code %d, want 0; stderr:\n%s", args, code, stderr.String())
		}
	}
	var printed bytes.Buffer // and without either flag the file is refused
	if code := exitCode(run(ctx, []string{"serve", "-config", cfg}, nil, io.Discard, io.Discard), &printed); code != 2 ||
		!strings.Contains(printed.String(), "allow_open_proxy") || !strings.Contains(printed.String(), "open.yaml") {
		t.Errorf("serve with the open file alone: exit %d, %q; want 2 naming the file and allow_open_proxy", code, printed.String())
	}
}

// TestRunHelpExitsZero: no arguments, -h, --help and help list the
// commands on stdout and exit 0.
func TestRunHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{nil, {"-h"}, {"-help"}, {"--help"}, {"help"}} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
		if code := exitCode(err, io.Discard); code != 0 {
			t.Errorf("run(%q): got exit code %d (error %v), want 0", args, code, err)
		}
		for _, want := range []string{"commands:", "audit verify", "hash-password", "version", "robotsproxy COMMAND -h"} {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("run(%q): got stdout %q, want it to contain %q", args, stdout.String(), want)
			}
		}
		if stderr.Len() != 0 {
			t.Errorf("run(%q): got stderr %q, want none", args, stderr.String())
		}
	}
}

// TestRunSubcommandHelp: every command's -h prints its usage on stdout and
// exits 0.
func TestRunSubcommandHelp(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "-h"}, "usage: robotsproxy serve"},
		{[]string{"serve", "--help"}, "-allow-open-proxy"},
		{[]string{"check", "-h"}, "usage: robotsproxy check"},
		{[]string{"audit", "-h"}, "usage: robotsproxy audit SUBCOMMAND"},
		{[]string{"audit", "--help"}, "verify"},
		{[]string{"audit", "report", "-h"}, "-format FORMAT"},
		{[]string{"audit", "verify", "-h"}, "-genesis"},
		{[]string{"audit", "show", "-h"}, "-body"},
		{[]string{"ca", "-h"}, "ca init"},
		{[]string{"ca", "init", "-h"}, "-cert FILE"},
		{[]string{"keys", "-h"}, "keys init"},
		{[]string{"keys", "init", "-h"}, "usage: robotsproxy keys init [-valid DURATION] DIR"},
		{[]string{"hash-password", "-h"}, "-cost N"},
		{[]string{"version", "-h"}, "usage: robotsproxy version"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
		if code := exitCode(err, io.Discard); code != 0 {
			t.Errorf("run(%q): got exit code %d (error %v), want 0", tt.args, code, err)
		}
		if !strings.Contains(stdout.String(), tt.want) {
			t.Errorf("run(%q): got stdout %q, want it to contain %q", tt.args, stdout.String(), tt.want)
		}
	}
}

func TestRunVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"-version"}, {"--version"}} {
		var stdout bytes.Buffer
		err := run(context.Background(), args, nil, &stdout, io.Discard)
		if code := exitCode(err, io.Discard); code != 0 {
			t.Fatalf("run(%q): got exit code %d (error %v), want 0", args, code, err)
		}
		for _, want := range []string{"robotsproxy ", "\ncommit ", "\ngo go1."} {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("run(%q): got %q, want it to contain %q", args, stdout.String(), want)
			}
		}
	}
}

// TestRunCheckArguments: check refuses what is not ROBOTS_FILE
// USER_AGENT URL... before reading anything, with exit 2 and its usage.
func TestRunCheckArguments(t *testing.T) {
	robots := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nDisallow: /action/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"swapped", []string{robots, "https://x.org/action/x", "ExampleBot"}, "is a URL: the order is ROBOTS_FILE USER_AGENT URL"},
		{"bad URL", []string{robots, "ExampleBot", "http://[::1"}, `"http://[::1"`},
		{"flag-like URL after --", []string{robots, "ExampleBot", "https://x.org/", "--", "-json"}, `URL "-json": want an absolute http or https URL`},
		{"relative URL", []string{robots, "ExampleBot", "action/x"}, "absolute http or https URL"},
		{"other scheme", []string{robots, "ExampleBot", "ftp://x.org/action/x"}, "absolute http or https URL"},
		{"no host", []string{robots, "ExampleBot", "https:///action/x"}, "no host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr, printed bytes.Buffer
			args := append([]string{"check"}, tt.args...)
			if code := exitCode(run(context.Background(), args, nil, &stdout, &stderr), &printed); code != 2 {
				t.Errorf("run(%q): got exit code %d, want 2; stdout %q", args, code, stdout.String())
			}
			if !strings.Contains(printed.String(), tt.want) {
				t.Errorf("run(%q): got %q, want it to contain %q", args, printed.String(), tt.want)
			}
			if !strings.Contains(stderr.String(), "usage: robotsproxy check") {
				t.Errorf("run(%q): got stderr %q, want the usage", args, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("run(%q): got stdout %q, want nothing decided", args, stdout.String())
			}
		})
	}
	for _, ok := range [][]string{
		{robots, "ExampleBot", "https://x.org/a", "/b", "http://[::1]:8080/c"},
		{robots, "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://x.org/bot)", "https://x.org/a"},
	} {
		args := append([]string{"check"}, ok...)
		if code := exitCode(run(context.Background(), args, nil, io.Discard, io.Discard), io.Discard); code != 0 {
			t.Errorf("run(%q): got exit code %d, want 0", args, code)
		}
	}
}

// TestRunServeBusyPort: a port in use fails serve (exit 1) with an error
// that names the listener, its key and its flag.
func TestRunServeBusyPort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("admin_listen: \"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"proxy", []string{"-listen", addr}, []string{"proxy listener on " + addr, "(listen, flag -listen)", "already in use", "choose another port with -listen or listen"}},
		{"admin", []string{"-listen", "127.0.0.1:0", "-admin-listen", addr}, []string{"admin listener on " + addr, "(admin_listen, flag -admin-listen)", "already in use"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"serve", "-config", cfg}, tt.args...)
			var printed bytes.Buffer
			if code := exitCode(run(context.Background(), args, nil, io.Discard, io.Discard), &printed); code != 1 {
				t.Errorf("run(%q): got exit code %d, want 1", args, code)
			}
			for _, w := range tt.want {
				if !strings.Contains(printed.String(), w) {
					t.Errorf("run(%q): got %q, want it to contain %q", args, printed.String(), w)
				}
			}
		})
	}
}

func TestRunHealthcheck(t *testing.T) {
	var ready atomic.Bool
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ready.Load() && r.URL.Path == "/readyz" {
			http.Error(w, "not ready: starting", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready\n")
	}))
	defer admin.Close()
	addr := strings.TrimPrefix(admin.URL, "http://")
	tests := []struct {
		name  string
		ready bool
		args  []string
		code  int
		want  string // in stdout, or in what exitCode prints
	}{
		{"ready", true, []string{"-addr", addr}, 0, "/readyz: ready"},
		{"not ready", false, []string{"-addr", addr}, 1, "503 Service Unavailable not ready: starting"},
		{"alive though not ready", false, []string{"-addr", addr, "-path", "/healthz"}, 0, "/healthz: ready"},
		{"bad path", true, []string{"-addr", addr, "-path", "/metrics"}, 2, "want /readyz or /healthz"},
		{"bad addr", true, []string{"-addr", "9090"}, 2, "want HOST:PORT"},
		{"bad timeout", true, []string{"-addr", addr, "-timeout", "0s"}, 2, "positive duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ready.Store(tt.ready)
			var stdout, printed bytes.Buffer
			args := append([]string{"healthcheck"}, tt.args...)
			if code := exitCode(run(context.Background(), args, nil, &stdout, io.Discard), &printed); code != tt.code {
				t.Errorf("run(%q): got exit code %d, want %d; printed %q", args, code, tt.code, printed.String())
			}
			if out := stdout.String() + printed.String(); !strings.Contains(out, tt.want) {
				t.Errorf("run(%q): got %q, want it to contain %q", args, out, tt.want)
			}
		})
	}
}

// TestRunServeCheckConfig: -check-config validates with the flags applied
// and exits without listening.
func TestRunServeCheckConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "open.yaml")
	if err := os.WriteFile(cfg, []byte("listen: 0.0.0.0:8080\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "-check-config", "-config", cfg, "-allow-open-proxy"}, 0, "open.yaml with the flags: valid (mode enforce, listen 0.0.0.0:8080"},
		{[]string{"serve", "-check-config", "-config", cfg}, 2, "allow_open_proxy"},
	} {
		var stdout, printed bytes.Buffer
		if code := exitCode(run(context.Background(), tt.args, nil, &stdout, io.Discard), &printed); code != tt.code {
			t.Errorf("run(%q): got exit code %d, want %d", tt.args, code, tt.code)
		}
		if out := stdout.String() + printed.String(); !strings.Contains(out, tt.want) {
			t.Errorf("run(%q): got %q, want it to contain %q", tt.args, out, tt.want)
		}
	}
}

// TestVersionFromLdflags: -ldflags "-X main.version=... -X main.commit=..."
// win over the module's build information.
func TestVersionFromLdflags(t *testing.T) {
	d := newDispatcher(build.Info{Version: "1.2.3", Commit: "0123abc"})
	var stdout bytes.Buffer
	if err := d.run(context.Background(), []string{"version"}, command.Stdio{Stdout: &stdout, Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if want := "robotsproxy 1.2.3\ncommit 0123abc\ngo go1."; !strings.HasPrefix(stdout.String(), want) {
		t.Errorf("version: got %q, want it to start with %q", stdout.String(), want)
	}
}
