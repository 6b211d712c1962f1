package command

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Healthcheck is "robotsproxy healthcheck": GET the admin endpoint, exit 0
// on 200 and 1 otherwise. It needs no shell or curl, so a distroless
// image's HEALTHCHECK can run it. With -wait it probes again every
// pollInterval until the endpoint answers 200 or the wait is over: a
// script waits with it for a serve it started.
var Healthcheck = Command{
	Name:    "healthcheck",
	Summary: "probe a running serve's admin endpoint (for container health checks)",
	Usage:   "healthcheck [-addr HOST:PORT] [-path /readyz|/healthz] [-timeout D] [-wait D]",
	run:     runHealthcheck,
}

func runHealthcheck(ctx context.Context, cmd Command, args []string, stdio Stdio) error {
	fs := cmd.flagSet(`Probe a running serve's admin endpoint (admin_listen): exit 0 when it answers
200, 1 otherwise, with the reason on stderr. For a container's HEALTHCHECK,
and, with -wait, for a script that waits for the serve it started.`, stdio.Stderr)
	addr := fs.String("addr", "127.0.0.1:9090", "the admin listener's `HOST:PORT`; an unspecified host (0.0.0.0, ::) means loopback")
	path := fs.String("path", "/readyz", "`PATH` to probe: /readyz (ready to serve) or /healthz (the process answers)")
	timeout := fs.Duration("timeout", 3*time.Second, "give up on one probe after `D`")
	wait := fs.Duration("wait", 0, "probe again until the endpoint answers 200, for at most `D` (0: probe once)")
	if err := cmd.parse(fs, args, stdio.Stdout); err != nil {
		return err
	}
	if err := noArguments(fs); err != nil {
		return err
	}
	if *path != "/readyz" && *path != "/healthz" {
		return usageErr("healthcheck: -path %q: want /readyz or /healthz", *path)
	}
	if *timeout <= 0 {
		return usageErr("healthcheck: -timeout %v: want a positive duration such as 3s", *timeout)
	}
	if *wait < 0 {
		return usageErr("healthcheck: -wait %v: want 0 or a positive duration such as 30s", *wait)
	}
	u, err := probeURL(*addr, *path)
	if err != nil {
		return usageErr("healthcheck: -addr: %v", err)
	}
	deadline := time.Now().Add(*wait)
	for {
		msg, err := probe(ctx, u, *timeout)
		if err == nil {
			fmt.Fprintf(stdio.Stdout, "%s: %s\n", u, msg)
			return nil
		}
		if time.Now().Add(pollInterval).After(deadline) || ctx.Err() != nil {
			return &exitError{1, fmt.Errorf("healthcheck: %w", err)}
		}
		select {
		case <-ctx.Done():
		case <-time.After(pollInterval):
		}
	}
}

// pollInterval is the pause between two probes of healthcheck -wait.
const pollInterval = 100 * time.Millisecond

// probe GETs u, never through HTTP_PROXY, within timeout, and returns the
// start of the body of a 200 answer; any other answer or failure is an
// error that says what came back.
func probe(ctx context.Context, u string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}} // never through HTTP_PROXY
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	msg := strings.TrimSpace(string(body))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s %s", u, resp.Status, msg)
	}
	return msg, nil
}

// probeURL is http://ADDR/PATH, an unspecified host replaced by loopback:
// a listener on 0.0.0.0:9090 is probed at 127.0.0.1:9090.
func probeURL(addr, path string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("want HOST:PORT, got %q", addr)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port) + path, nil
}
