package enforce

import (
	"io"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// Config is robotsproxy's configuration: the keys of config.yaml
// (docs/configuration.md), as serve reads them. Build one with
// LoadConfig, ParseConfig or DefaultConfig, and change its fields before
// New if needed; New validates it.
type Config = config.Config

// LoadConfig reads and validates a config.yaml file with serve's own
// loader. Its error names the file and the key at fault; an unknown key is
// an error, as it is for serve.
func LoadConfig(path string) (Config, error) { return config.LoadFile(path) }

// ParseConfig reads and validates configuration YAML from r, as
// LoadConfig does for a file.
func ParseConfig(r io.Reader) (Config, error) { return config.Load(r) }

// DefaultConfig returns serve's defaults (mode enforce, destinations on
// loopback and private networks refused, crawl delays ignored unless
// politeness.crawl_delay is enforce).
func DefaultConfig() Config { return config.Default() }
