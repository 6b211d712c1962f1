package command

import (
	"errors"
	"fmt"

	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/audit/verify"
)

// verifyAnchors reads -checkpoints (checked with the key in -checkpoint-key)
// and -head into VerifyOptions: the flags audit report and audit verify
// share.
func verifyAnchors(checkpoints, keyFile, head string) (verify.VerifyOptions, error) {
	var o verify.VerifyOptions
	if keyFile != "" && checkpoints == "" {
		return o, errors.New("-checkpoint-key: give -checkpoints too")
	}
	if checkpoints != "" {
		var key []byte
		if keyFile != "" {
			k, err := audit.ReadCheckpointKey(keyFile)
			if err != nil {
				return o, fmt.Errorf("-checkpoint-key: %w", err)
			}
			key = k
		}
		var err error
		if o.Checkpoints, err = audit.ReadCheckpoints(checkpoints, key); err != nil {
			return o, fmt.Errorf("-checkpoints: %w", err)
		}
	}
	if head != "" {
		h, err := audit.ParseHead(head)
		if err != nil {
			return o, fmt.Errorf("-head: %w", err)
		}
		o.Head = &h
	}
	return o, nil
}
