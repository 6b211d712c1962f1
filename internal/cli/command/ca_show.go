package command

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"text/template"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/mitm"
	"github.com/robotsproxy/robotsproxy/internal/server"
)

// CAShow is "robotsproxy ca show": the CA serve intercepts with under the
// configuration (the operator's mitm.ca_cert, or the one in the data
// directory), its fingerprint, and how each client trusts it. It never
// creates a CA: exit 2 when there is none yet.
var CAShow = Command{
	Name:    "ca show",
	Summary: "print the CA serve intercepts with, and how clients trust it",
	Usage:   "ca show [-config FILE] [-data-dir DIR]",
	run:     runCAShow,
}

func runCAShow(_ context.Context, cmd Command, args []string, stdio Stdio) error {
	fs := cmd.flagSet(`Print the CA that serve intercepts HTTPS with under this configuration:
mitm.ca_cert when set, else the CA serve created in the data directory on
its first start. Also prints its SHA-256 fingerprint and how to trust it
from curl, Python requests, Scrapy, Node and Go.`, stdio.Stderr)
	cfgFile := fs.String("config", defaultConfig, "configuration `FILE`")
	dataDir := fs.String("data-dir", "", "the data `DIR` (overrides data_dir)")
	if err := cmd.parse(fs, args, stdio.Stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("ca show: unexpected arguments %q\n%s", fs.Args(), cmd.usage())
	}
	cfg, _, err := loadConfig(*cfgFile, isSet(fs, "config"), zerolog.Nop())
	if err != nil {
		return &exitError{2, fmt.Errorf("ca show: %w", err)}
	}
	if isSet(fs, "data-dir") {
		cfg.DataDir = *dataDir
	}
	if cfg.MITM.Mode == config.MITMHostLevel {
		fmt.Fprintf(stdio.Stdout, "mitm.mode is host-level: serve intercepts nothing, so no CA is used.\nWhat that gives up: %s.\n", server.HostLevelGivesUp)
		return nil
	}
	ca, certFile, source, err := shownCA(cfg)
	if err != nil {
		return &exitError{2, fmt.Errorf("ca show: %w", err)}
	}
	if abs, err := filepath.Abs(certFile); err == nil {
		certFile = abs
	}
	c := ca.Certificate()
	return caShowText.Execute(stdio.Stdout, map[string]string{
		"Cert": certFile, "Source": source, "Subject": c.Subject.String(),
		"NotAfter": c.NotAfter.UTC().Format("2006-01-02"), "SHA256": ca.Fingerprint(),
		"Trust": server.TrustHint(certFile), "Proxy": "http://" + cfg.Listen,
	})
}

// shownCA loads the CA of cfg: mitm.ca_cert, or the data directory's.
func shownCA(cfg config.Config) (ca *mitm.CA, certFile, source string, err error) {
	if cfg.MITM.CACert != "" {
		ca, err = mitm.LoadCA(cfg.MITM.CACert, cfg.MITM.CAKey)
		return ca, cfg.MITM.CACert, "mitm.ca_cert", err
	}
	dir, err := cfg.ResolveDataDir(os.Getenv)
	if err != nil {
		return nil, "", "", err
	}
	certFile = filepath.Join(dir, mitm.DataDirCert)
	if _, err := os.Stat(certFile); err != nil {
		return nil, certFile, "", fmt.Errorf("no CA in the data directory %s yet (%w): serve creates it there on its first start", dir, err)
	}
	ca, err = mitm.LoadCA(certFile, filepath.Join(dir, mitm.DataDirKey))
	return ca, certFile, "data_dir " + dir, err
}

var caShowText = template.Must(template.New("ca show").Parse(`CA certificate: {{.Cert}}
from:           {{.Source}}
subject:        {{.Subject}}
valid until:    {{.NotAfter}}
sha256:         {{.SHA256}}
trust it:       {{.Trust}}

Clients must trust this CA: serve answers every HTTPS request itself, with a
certificate it signs, so that robots.txt applies to each path. A client that
does not trust it fails with a TLS error; nothing reaches the origin.
Recipes, tested: docs/clients.md.

curl
  curl --proxy {{.Proxy}} --cacert {{.Cert}} https://example.com/
  (or export HTTPS_PROXY={{.Proxy}} CURL_CA_BUNDLE={{.Cert}})

Python requests
  export HTTPS_PROXY={{.Proxy}} REQUESTS_CA_BUNDLE={{.Cert}}
  (or requests.get(url, proxies={"https": "{{.Proxy}}"}, verify="{{.Cert}}"))

Scrapy
  export HTTPS_PROXY={{.Proxy}}
  settings: HTTPERROR_ALLOWED_CODES = [403, 429, 503]   (else Scrapy drops the proxy's refusals)
  Scrapy does not verify certificates by default; to verify, also set
  DOWNLOADER_CLIENTCONTEXTFACTORY = "scrapy.core.downloader.contextfactory.BrowserLikeContextFactory"
  and export SSL_CERT_FILE={{.Cert}}

Node (fetch and http.get ignore HTTPS_PROXY unless told)
  export NODE_EXTRA_CA_CERTS={{.Cert}} HTTPS_PROXY={{.Proxy}}
  then in code: import { EnvHttpProxyAgent, setGlobalDispatcher } from "undici";
                setGlobalDispatcher(new EnvHttpProxyAgent());
  (Node 22.21+ and 24+: NODE_USE_ENV_PROXY=1 instead of the two lines)

Go (the environment proxy is never used for localhost or 127.0.0.1 targets)
  transport := &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: pool}}
  with pool holding {{.Cert}}, or SSL_CERT_FILE={{.Cert}} for the system roots
`))
