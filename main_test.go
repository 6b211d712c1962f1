package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	for _, want := range []string{"usage:", "robotsproxy serve [-config FILE] [-listen HOST:PORT] [-admin-listen HOST:PORT] [-allow-private]", "robotsproxy check [-json] ROBOTS_FILE USER_AGENT URL..."} {
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

func TestExitCode(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		want    int
		printed string
	}{
		{"nil", nil, 0, ""},
		{"plain error", errors.New("boom"), 1, "robotsproxy: boom\n"},
		{"usage error", usageErr("bad %s", "flag"), 2, "robotsproxy: bad flag\n"},
		{"wrapped usage error", errors.Join(usageErr("inner")), 2, "robotsproxy: inner\n"},
		{"disallowed", errDisallowed, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var printed bytes.Buffer
			if got := exitCode(tt.err, &printed); got != tt.want {
				t.Errorf("exitCode(%v): got %d, want %d", tt.err, got, tt.want)
			}
			if printed.String() != tt.printed {
				t.Errorf("exitCode(%v): printed %q, want %q", tt.err, printed.String(), tt.printed)
			}
		})
	}
}
