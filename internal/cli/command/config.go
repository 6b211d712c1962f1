package command

import (
	"errors"
	"flag"
	"io/fs"
	"os"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// defaultConfig is the configuration file that serve and the commands
// reading one (-config) take when none is named.
const defaultConfig = "config.yaml"

// loadConfig reads the configuration and returns it with the file it came
// from. A missing default ./config.yaml means the built-in defaults (and
// file ""); a missing file named with -config is an error.
func loadConfig(path string, explicit bool, logger zerolog.Logger) (cfg config.Config, file string, err error) {
	cfg, err = config.DecodeFile(path) // validated with the flags applied
	if err != nil && !explicit && errors.Is(err, fs.ErrNotExist) {
		logger.Info().Str("config", path).Msg("no configuration file; using the built-in defaults")
		return config.Default(), "", nil
	}
	return cfg, path, err
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// archiveDir returns -archive, else the configuration's audit.archive_dir
// ("" when neither names one; a missing default config.yaml is no error).
func archiveDir(fs *flag.FlagSet, archive, cfgPath string) (string, error) {
	if archive != "" {
		return archive, nil
	}
	cfg, _, err := loadConfig(cfgPath, isSet(fs, "config"), zerolog.Nop())
	if err != nil {
		return "", err
	}
	return cfg.Audit.ArchiveDir, nil
}

// dataDirOf returns -data-dir, else the configuration's data_dir, else
// its default (config.DefaultDataDir): where serve keeps its CA and
// ipranges update its copies.
func dataDirOf(fs *flag.FlagSet, dataDir, cfgPath string) (string, error) {
	if isSet(fs, "data-dir") {
		return dataDir, nil
	}
	cfg, _, err := loadConfig(cfgPath, isSet(fs, "config"), zerolog.Nop())
	if err != nil {
		return "", err
	}
	return cfg.ResolveDataDir(os.Getenv)
}
