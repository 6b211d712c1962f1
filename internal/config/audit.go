package config

import "errors"

// validateAudit checks the audit section's write-error policy and
// checkpoint log.
func (c *Config) validateAudit() error {
	a := c.Audit
	checks := []struct {
		key string
		err error
	}{
		{"audit.on_write_error", oneOf(a.OnWriteError, "refuse", "continue")},
		{"audit.checkpoint_every_lines", atLeast(a.CheckpointEveryLines, 1, "")},
		{"audit.checkpoint_every", positive(a.CheckpointEvery)},
	}
	for _, ch := range checks {
		if ch.err != nil {
			return keyError(ch.key, ch.err)
		}
	}
	if a.CheckpointFile == "" {
		if a.CheckpointHMACKeyFile != "" {
			return keyError("audit.checkpoint_hmac_key_file", errors.New("signs checkpoints: set audit.checkpoint_file too"))
		}
		return nil
	}
	if !a.Chain {
		return keyError("audit.checkpoint_file", errors.New("checkpoints record the hash chain's head: set audit.chain: true"))
	}
	if c.Log.File == "" {
		return keyError("audit.checkpoint_file", errors.New("checkpoints anchor an audit log file: set log.file"))
	}
	if a.CheckpointFile == c.Log.File {
		return keyError("audit.checkpoint_file", errors.New("must not be log.file itself"))
	}
	return nil
}
