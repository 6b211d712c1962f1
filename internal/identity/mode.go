package identity

import "github.com/robotsproxy/robotsproxy/internal/rules"

// Mode says how a robots.txt denial is acted on: rules.Mode, the value
// of mode, identity.users[].mode and identity.client_ranges[].mode.
type Mode = rules.Mode

const (
	// ModeEnforce is rules.ModeEnforce: a denied request gets 403.
	ModeEnforce = rules.ModeEnforce
	// ModeReport is rules.ModeReport: a denied request is forwarded and
	// the denial only recorded.
	ModeReport = rules.ModeReport
)
