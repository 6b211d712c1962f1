package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// quickStartStep is one command line of the README's Quick start block and
// the output the README states for it (the "# " comment lines right under
// it, without the "# "); background is set for a line ending in "&".
type quickStartStep struct {
	line       string
	want       []string
	background bool
}

// quickStart returns the steps of the first ```sh block under
// "## Quick start" in readme.
func quickStart(readme string) ([]quickStartStep, error) {
	_, section, ok := strings.Cut(readme, "\n## Quick start\n")
	if !ok {
		return nil, fmt.Errorf(`no "## Quick start" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "\n```sh\n")
	if !ok {
		return nil, fmt.Errorf("no ```sh block in the Quick start")
	}
	block, _, ok = strings.Cut(block, "\n```")
	if !ok {
		return nil, fmt.Errorf("the Quick start's ```sh block is not closed")
	}
	var steps []quickStartStep
	prevCommand := false
	for _, line := range strings.Split(block, "\n") {
		switch {
		case strings.TrimSpace(line) == "":
			prevCommand = false
		case strings.HasPrefix(line, "#"):
			if prevCommand {
				steps[len(steps)-1].want = append(steps[len(steps)-1].want, strings.TrimPrefix(strings.TrimPrefix(line, "#"), " "))
			}
		default:
			bg := strings.HasSuffix(line, "&") || strings.HasSuffix(line, "&)")
			steps = append(steps, quickStartStep{line: line, background: bg})
			prevCommand = true
		}
	}
	return steps, nil
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// waitListening waits until addr accepts connections, for at most d, or
// until exited is closed (the process that should listen has exited).
func waitListening(t *testing.T, addr string, d time.Duration, exited <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("the process that should listen on %s has exited", addr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s after %v: %v", addr, d, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// normalizeOutput joins lines with single spaces for each run of white
// space, so that a tab in the output matches the README's tab or spaces.
func normalizeOutput(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// TestReadmeQuickStart runs the README's Quick start block as a new user
// would, from the repository root: it builds the binary, starts the proxy
// and the example site in the background (on free ports instead of 8080,
// 9090 and 8001, with the built-in defaults instead of config.yaml so that
// the run does not depend on edits to it), runs every other command and
// compares its standard output with the comment lines under it.
func TestReadmeQuickStart(t *testing.T) {
	for _, tool := range []string{"curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPED: the README's Quick start needs %s on PATH (CI installs it)", tool)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	steps, err := quickStart(string(readme))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	repo, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	noConfig := filepath.Join(dir, "empty.yaml") // the built-in defaults
	if err := os.WriteFile(noConfig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	proxyPort, adminPort, sitePort := freePort(t), freePort(t), freePort(t)
	rewrite := strings.NewReplacer(
		"127.0.0.1:8080", "127.0.0.1:"+proxyPort,
		"127.0.0.1:8001", "127.0.0.1:"+sitePort,
		"http.server 8001", "http.server "+sitePort,
		"-o robotsproxy", "-o "+filepath.Join(dir, "robotsproxy"),
		"./robotsproxy ", filepath.Join(dir, "robotsproxy")+" ",
	)
	serve := regexp.MustCompile(`robotsproxy serve\b`)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var checked int
	for _, step := range steps {
		line := rewrite.Replace(step.line)
		if serve.MatchString(line) {
			line = serve.ReplaceAllString(line, fmt.Sprintf("robotsproxy serve -config %s -listen 127.0.0.1:%s -admin-listen 127.0.0.1:%s",
				noConfig, proxyPort, adminPort))
		}
		if step.background {
			line = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(line, "("), ")"), "&")
			var out bytes.Buffer
			cmd := exec.Command("bash", "-c", line)
			cmd.Dir, cmd.Stdout, cmd.Stderr = repo, &out, &out
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatalf("%s: %v", step.line, err)
			}
			exited := make(chan struct{})
			go func() { cmd.Wait(); close(exited) }()
			t.Cleanup(func() {
				syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
				select {
				case <-exited:
				case <-time.After(10 * time.Second):
					syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
					<-exited
				}
				if t.Failed() {
					t.Logf("output of %q:\n%s", step.line, out.String())
				}
			})
			switch {
			case serve.MatchString(line):
				waitListening(t, "127.0.0.1:"+proxyPort, 30*time.Second, exited)
			case strings.Contains(line, "http.server"):
				waitListening(t, "127.0.0.1:"+sitePort, 30*time.Second, exited)
			}
			continue
		}
		cmd := exec.CommandContext(ctx, "bash", "-c", line)
		cmd.Dir = repo
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if step.want == nil {
			if err != nil {
				t.Fatalf("%s: %v\n%s%s", step.line, err, stdout.String(), stderr.String())
			}
			continue
		}
		checked++
		if got, want := normalizeOutput(stdout.String()), normalizeOutput(rewrite.Replace(strings.Join(step.want, "\n"))); got != want {
			t.Errorf("%s\nprinted: %s\nREADME says: %s\n(stderr: %s, exit: %v)", step.line, got, want, stderr.String(), err)
		}
	}
	if checked < 3 {
		t.Errorf("checked %d commands' outputs, want at least 3: the Quick start block lost its expected outputs", checked)
	}
}

// mdAnchors returns the GitHub anchors of a Markdown file's headings.
func mdAnchors(text string) map[string]bool {
	out := map[string]bool{}
	drop := regexp.MustCompile(`[^\w\- ]`)
	for _, m := range regexp.MustCompile(`(?m)^#+ (.*)$`).FindAllStringSubmatch(text, -1) {
		a := drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), "")
		out[strings.ReplaceAll(a, " ", "-")] = true
	}
	return out
}

// TestDocs checks the documentation as a reader meets it: README.md stays a
// front page (at most 250 lines), every relative link of README.md,
// CHANGELOG.md, testdata/README.md and docs/*.md names a file that exists
// and a heading that exists, and no page points to an issue tracker that
// is not in the repository (an issue number).
func TestDocs(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join("docs", "*.md"))
	if len(pages) < 12 {
		t.Errorf("docs/ has %d pages, want the 12 of the manual", len(pages))
	}
	pages = append(pages, "README.md", "CHANGELOG.md", filepath.Join("testdata", "README.md"), "config.yaml")
	fence := regexp.MustCompile("(?s)```.*?```")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	issue := regexp.MustCompile(`(?i)\bissues?( [0-9]+|'s\b)`)
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		if page == "README.md" {
			if n := strings.Count(text, "\n"); n > 250 {
				t.Errorf("README.md has %d lines, want at most 250: move the detail to docs/", n)
			}
		}
		if m := issue.FindString(text); m != "" {
			t.Errorf("%s mentions %q: name the behaviour, not the tracker", page, m)
		}
		if !strings.HasSuffix(page, ".md") {
			continue
		}
		for _, m := range link.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			body, err := os.ReadFile(path)
			if err != nil {
				if _, serr := os.Stat(path); serr != nil {
					t.Errorf("%s links to %s, which does not exist", page, target)
				}
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !mdAnchors(string(body))[anchor] {
				t.Errorf("%s links to %s: %s has no heading #%s", page, target, path, anchor)
			}
		}
	}
}
