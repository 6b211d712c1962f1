// Package csvcell holds the one rule every CSV output of robotsproxy
// applies to a text cell, so that audit report and audit access-log
// neutralise spreadsheet formulas alike.
package csvcell

import "strings"

// Safe neutralises a text cell that a spreadsheet would read as a
// formula: one that starts with "=", "+", "-", "@", a tab or a carriage
// return gets a leading single quote (OWASP's CSV injection guidance).
// Text cells come from requests, logs and robots.txt files (URLs, hosts,
// User-Agents, rules), which a crawler or a site controls, so every one
// is passed through Safe. Other cells are returned unchanged.
func Safe(s string) string {
	if s != "" && strings.IndexByte("=+-@\t\r", s[0]) >= 0 {
		return "'" + s
	}
	return s
}
