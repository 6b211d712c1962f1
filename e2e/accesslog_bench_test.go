package e2e

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkAccessLog10M runs "audit access-log" on a generated Combined
// Log Format file of 10 million lines (about 2 GB), and GoAccess on the
// same file when it is installed, and reports each one's wall time, the
// command's peak RSS, and the ratio. It is opt-in, as it writes the file:
//
//	ROBOTSPROXY_ACCESSLOG_BENCH=/var/tmp/alb go test ./e2e/ -run '^$' -bench AccessLog10M -benchtime 1x
//
// The file is written to that directory once and reused;
// ROBOTSPROXY_ACCESSLOG_LINES changes the number of lines.
func BenchmarkAccessLog10M(b *testing.B) {
	dir := os.Getenv("ROBOTSPROXY_ACCESSLOG_BENCH")
	if dir == "" {
		b.Skip("set ROBOTSPROXY_ACCESSLOG_BENCH=DIR to generate a 10-million-line log in DIR and run it")
	}
	n := 10_000_000
	if s := os.Getenv("ROBOTSPROXY_ACCESSLOG_LINES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	log := filepath.Join(dir, fmt.Sprintf("access-%d.log", n))
	if _, err := os.Stat(log); err != nil {
		if err := writeBenchLog(b, log, n); err != nil {
			b.Fatal(err)
		}
	}
	fi, _ := os.Stat(log)
	versions := b.TempDir()
	for _, v := range accessLogVersions {
		os.WriteFile(filepath.Join(versions, v.name), []byte(v.body), 0o644)
	}
	out := filepath.Join(b.TempDir(), "out")
	args := append(append([]string{"audit", "access-log", "-robots", versions}, rangesArgs()...), "-format", "json", "-o", out+".json", log)
	b.ResetTimer()
	for range b.N {
		wall, cpu, rss := runMeasured(b, binary, args...)
		b.ReportMetric(wall.Seconds(), "s/run")
		b.ReportMetric(cpu.Seconds(), "cpu-s/run")
		b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MiB")
		b.ReportMetric(float64(fi.Size())/wall.Seconds()/(1<<20), "MiB/s")
		if _, err := exec.LookPath("goaccess"); err != nil {
			b.Log("goaccess not installed (apt-get install goaccess): no comparison")
			continue
		}
		gw, gcpu, grss := runMeasured(b, "goaccess", log, "--log-format=COMBINED", "--no-progress", "-o", out+"-goaccess.json")
		b.ReportMetric(gw.Seconds(), "goaccess-s/run")
		b.ReportMetric(gcpu.Seconds(), "goaccess-cpu-s/run")
		b.ReportMetric(float64(grss)/(1<<20), "goaccess-peak-RSS-MiB")
		b.ReportMetric(gw.Seconds()/wall.Seconds(), "goaccess/robotsproxy")
		b.ReportMetric(gcpu.Seconds()/cpu.Seconds(), "goaccess/robotsproxy-cpu")
		b.Logf("%d lines, %d octets: robotsproxy %v wall, %v CPU, peak RSS %d MiB; goaccess %v wall, %v CPU, peak RSS %d MiB: goaccess takes %.2f times as long (%.2f times the CPU)",
			n, fi.Size(), wall.Round(time.Millisecond), cpu.Round(time.Millisecond), rss>>20, gw.Round(time.Millisecond), gcpu.Round(time.Millisecond), grss>>20,
			gw.Seconds()/wall.Seconds(), gcpu.Seconds()/cpu.Seconds())
	}
}

// runMeasured runs a program and returns its wall time, its CPU time
// (user and system: what a busy machine changes least) and its peak RSS
// in octets.
func runMeasured(b *testing.B, prog string, args ...string) (wall, cpu time.Duration, rss int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %q: %v\n%s", prog, args, err, stderr.String())
	}
	wall = time.Since(start)
	cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss << 10 // Linux reports KiB
	}
	return wall, cpu, rss
}

// writeBenchLog writes n lines of Combined Log Format over 18 days:
// mostly browsers and crawlers on allowed paths, some disallowed
// requests, some impostors and robots.txt fetches, with real User-Agents.
func writeBenchLog(b *testing.B, path string, n int) error {
	google, bing, gpt, others := realAgents(b)
	browsers := []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
		"Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1",
	}
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	start := mustTime("2026-11-02T00:00:00Z")
	step := 18 * 24 * time.Hour / time.Duration(n)
	paths := []string{"/", "/index.html", "/blog/%d.html", "/public/%d.css", "/private/%d", "/drafts/%d", "/ai/%d", "/robots.txt", "/search?q=%d&page=2"}
	for i := range n {
		t := start.Add(time.Duration(i) * step)
		var ua, ip string
		switch r := rng.IntN(100); {
		case r < 60:
			ua, ip = browsers[r%len(browsers)], fmt.Sprintf("198.51.%d.%d", r, rng.IntN(250))
		case r < 75:
			ua, ip = google, fmt.Sprintf("66.249.79.%d", 225+rng.IntN(30))
		case r < 82:
			ua, ip = bing, fmt.Sprintf("157.55.39.%d", rng.IntN(250))
		case r < 85:
			ua, ip = gpt, fmt.Sprintf("20.171.206.%d", rng.IntN(250))
		case r < 87:
			ua, ip = google, fmt.Sprintf("203.0.113.%d", rng.IntN(250)) // impostor
		default:
			ua, ip = others[rng.IntN(len(others))], fmt.Sprintf("192.0.2.%d", rng.IntN(250))
		}
		p := paths[rng.IntN(len(paths))]
		if strings.Contains(p, "%d") {
			p = fmt.Sprintf(p, rng.IntN(100000))
		}
		fmt.Fprintf(w, "%s - - [%s] \"GET %s HTTP/1.1\" 200 %d \"https://www.example.org/ref/%d\" \"%s\"\n",
			ip, t.Format("02/Jan/2006:15:04:05 -0700"), p, rng.IntN(50000), rng.IntN(1000), ua)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}
