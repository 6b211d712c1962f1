package policy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/robotsproxy/robotsproxy/auditlog"
)

// ConnectPortError is the error of a CONNECT refused for its port
// (reason connect-port): Port is the port asked for, Allowed the ports
// CONNECT may reach (connect.ports).
type ConnectPortError struct {
	Port    int
	Allowed []int
}

// Error says which port was refused and which are allowed: "port 8443:
// CONNECT port is not allowed (allowed: [443])".
func (e *ConnectPortError) Error() string {
	return fmt.Sprintf("port %d: %v (allowed: %v)", e.Port, errConnectPort, e.Allowed)
}

// Unwrap returns the error every port refusal wraps.
func (e *ConnectPortError) Unwrap() error { return errConnectPort }

// Hint says, in one line for a person (the X-Robotsproxy-Hint header the
// proxy renders, and the last line of Text), what the operator changes when the refusal is
// theirs to lift, naming the configuration key and the serve flag; ""
// when there is nothing to say:
//   - a CONNECT port outside connect.ports: the key and -connect-ports,
//     with the list that would allow it;
//   - robots.txt unreachable for a TLS failure: upstream.ca_file and
//     -upstream-ca-file, for an origin whose certificate a private CA
//     issued (read at start), and that a reload (SIGHUP) ends the
//     refusal cached for the authority.
func (d *Decision) Hint() string {
	switch {
	case d.Reason == auditlog.ReasonConnectPort:
		var pe *ConnectPortError
		if !errors.As(d.Err, &pe) {
			return ""
		}
		ports := make([]string, 0, len(pe.Allowed)+1)
		for _, p := range pe.Allowed {
			ports = append(ports, strconv.Itoa(p))
		}
		ports = append(ports, strconv.Itoa(pe.Port))
		return fmt.Sprintf("the operator allows CONNECT to port %d with connect.ports in the configuration, or serve -connect-ports %s", pe.Port, strings.Join(ports, ","))
	case d.Access == Unreachable && d.Cause == CauseTLS:
		return UntrustedOriginHint
	}
	return ""
}

// UntrustedOriginHint is the Hint of a refusal after a TLS failure with
// the origin: how the operator trusts an origin's private CA, and how the
// refusal cached for the authority ends at once.
const UntrustedOriginHint = "if a private CA issued the origin's certificate, the operator adds that CA to upstream.ca_file (serve -upstream-ca-file FILE) and restarts; once the origin is fixed, a reload (SIGHUP) or a restart ends this refusal at once"
