package accesslog

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// gitHistory reads the history of path in the git repository repo with
// "git log --follow" (renames followed), through the git binary. A commit
// that deleted the file is a version without robots.txt.
func gitHistory(ctx context.Context, repo, path string) (*History, error) {
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("robots history git:%s:%s: %w", repo, path, err)
	}
	cmd := exec.CommandContext(ctx, git, "-C", repo, "log", "--follow", "--format=%x00%H %cI", "--name-status", "--", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("robots history git:%s:%s: git log: %w: %s", repo, path, err, strings.TrimSpace(stderr.String()))
	}
	var vs []Version
	for _, rec := range bytes.Split(out, []byte{0}) {
		v, ok, err := gitVersion(ctx, git, repo, string(rec))
		if err != nil {
			return nil, fmt.Errorf("robots history git:%s:%s: %w", repo, path, err)
		}
		if ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("robots history git:%s:%s: no commit touches the file", repo, path)
	}
	return newHistory(vs)
}

// gitVersion reads one record of git log's output: "HASH DATE\n\nSTATUS\tPATH...".
func gitVersion(ctx context.Context, git, repo, rec string) (Version, bool, error) {
	sc := bufio.NewScanner(strings.NewReader(rec))
	if !sc.Scan() || strings.TrimSpace(sc.Text()) == "" {
		return Version{}, false, nil
	}
	hash, date, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
	if !ok {
		return Version{}, false, fmt.Errorf("git log: unexpected line %q", sc.Text())
	}
	from, err := time.Parse(time.RFC3339, date)
	if err != nil {
		return Version{}, false, fmt.Errorf("git log: commit %s: %w", hash, err)
	}
	status, name := "", ""
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) >= 2 {
			status, name = f[0], f[len(f)-1] // for a rename, the new name
		}
	}
	if name == "" {
		return Version{}, false, fmt.Errorf("git log: commit %s names no file", hash)
	}
	v := Version{From: from.UTC(), Source: "git:" + hash}
	if strings.HasPrefix(status, "D") {
		v.load = func() ([]byte, bool, error) { return nil, true, nil }
		return v, true, nil
	}
	v.load = func() ([]byte, bool, error) {
		cmd := exec.CommandContext(ctx, git, "-C", repo, "cat-file", "blob", hash+":"+name)
		b, err := cmd.Output()
		if err != nil {
			return nil, false, fmt.Errorf("git cat-file %s:%s: %w", hash, name, err)
		}
		if len(b) > MaxRobotsBody {
			return nil, false, fmt.Errorf("git cat-file %s:%s: larger than %d octets", hash, name, MaxRobotsBody)
		}
		return b, false, nil
	}
	return v, true, nil
}
