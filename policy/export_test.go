package policy

// MarkReportOnly applies the request's mode to d, as Decide does after
// its last step.
func (p *Policy) MarkReportOnly(d *Decision, pin Pin) { p.markReportOnly(d, pin) }

// The memo of targets, for target_test.go.
const (
	TargetsMax    = targetsMax
	TargetHostMax = targetHostMax
)

// ErrHostDenied is the error of a host the host lists refuse.
var ErrHostDenied = errHostDenied

// Target computes (and remembers) the target of scheme and hostport.
func (p *Policy) Target(scheme, hostport string) { p.target(scheme, hostport) }

// TargetsLen returns the number of targets remembered.
func (p *Policy) TargetsLen() int { return p.targets.Len() }

// Remembers reports whether the target of scheme and hostport is
// remembered.
func (p *Policy) Remembers(scheme, hostport string) bool {
	_, ok := p.targets.Get(targetKey{scheme, hostport})
	return ok
}

// LicenseLink is the license a response's Link fields name (see Observe).
var LicenseLink = licenseLink
