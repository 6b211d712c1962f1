package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// runHealthcheck implements "robotsproxy healthcheck [-addr HOST:PORT]
// [-path /readyz|/healthz] [-timeout D]": GET the admin endpoint, exit 0
// on 200 and 1 otherwise. It needs no shell or curl, so a distroless
// image's HEALTHCHECK can run it.
func runHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("healthcheck", "healthcheck [-addr HOST:PORT] [-path /readyz|/healthz] [-timeout D]", `Probe a running serve's admin endpoint (admin_listen): exit 0 when it answers
200, 1 otherwise, with the reason on stderr. For a container's HEALTHCHECK.`, stderr)
	addr := fs.String("addr", "127.0.0.1:9090", "the admin listener's `HOST:PORT`; an unspecified host (0.0.0.0, ::) means loopback")
	path := fs.String("path", "/readyz", "`PATH` to probe: /readyz (ready to serve) or /healthz (the process answers)")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after `D`")
	if err := parseFlags(fs, args, stdout); err != nil {
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
	u, err := probeURL(*addr, *path)
	if err != nil {
		return usageErr("healthcheck: -addr: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return usageErr("healthcheck: %v", err)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}} // never through HTTP_PROXY
	resp, err := client.Do(req)
	if err != nil {
		return &exitError{1, fmt.Errorf("healthcheck: %w", err)}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	msg := strings.TrimSpace(string(body))
	if resp.StatusCode != http.StatusOK {
		return &exitError{1, fmt.Errorf("healthcheck: %s: %s %s", u, resp.Status, msg)}
	}
	fmt.Fprintf(stdout, "%s: %s\n", u, msg)
	return nil
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
