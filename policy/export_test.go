package policy

import "github.com/robotsproxy/robotsproxy/internal/identity"

// MarkReportOnly applies the request's mode to d, as Decide does after
// its last step.
func (p *Policy) MarkReportOnly(d *Decision, pin identity.Pin) { p.markReportOnly(d, pin) }
