package config

import (
	"errors"
	"path/filepath"
)

// The values of mitm.mode.
const (
	// MITMIntercept intercepts CONNECT tunnels and decides every request
	// inside on its path (the default).
	MITMIntercept = "intercept"
	// MITMHostLevel leaves CONNECT tunnels unintercepted: one decision per
	// tunnel, for "/" of its host, under the CONNECT's own identity.
	MITMHostLevel = "host-level"
)

// DefaultDataDir returns the directory used when data_dir is not set:
// $XDG_STATE_HOME/robotsproxy when XDG_STATE_HOME is an absolute path (the
// XDG Base Directory Specification ignores relative ones), else
// $HOME/.local/state/robotsproxy. getenv reads the environment (os.Getenv).
// It fails, rather than fall back to the working directory, when neither
// variable gives an absolute path.
func DefaultDataDir(getenv func(string) string) (string, error) {
	if x := getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "robotsproxy"), nil
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "robotsproxy"), nil
	}
	return "", errors.New("data_dir: not set, and neither XDG_STATE_HOME nor HOME is an absolute path: set data_dir (or -data-dir) to where the proxy may keep its CA")
}

// ResolveDataDir returns c.DataDir, or DefaultDataDir(getenv) when it is
// empty.
func (c *Config) ResolveDataDir(getenv func(string) string) (string, error) {
	if c.DataDir != "" {
		return c.DataDir, nil
	}
	return DefaultDataDir(getenv)
}
