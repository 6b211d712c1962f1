package live

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/audit"
)

// Paths of the live view on the admin listener.
const (
	PathPage   = "/live"
	PathEvents = "/live/events"
	PathLine   = "/live/line/" // + the line's hex SHA-256
)

// Routes adds the live view to the admin listener's mux: the page, the
// stream and the lines by SHA-256.
func (h *Hub) Routes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+PathPage, servePage)
	mux.HandleFunc("GET "+PathEvents, h.serveEvents)
	mux.HandleFunc("GET "+PathLine+"{sha256}", h.serveLine)
}

var (
	//go:embed page/live.html
	pageHTML string
	//go:embed page/live.js
	pageJS string
	//go:embed page/live.css
	pageCSS string
)

// page is the live page, rendered once, and its Content-Security-Policy:
// nothing but its own inline script and style (by their SHA-256), and
// connections to its own origin (the stream); no outside asset.
var page, pageCSP = renderPage()

// pageFields are the audit line fields the page's script reads, by the
// name the script gives them: the script takes the names from here, so
// that the audit line's schema (package auditlog) has one home.
var pageFields = map[string]string{
	"time": auditlog.FieldTime, "client": auditlog.FieldClient, "method": auditlog.FieldMethod, "protocol": auditlog.FieldProtocol, "url": auditlog.FieldURL,
	"token": auditlog.FieldToken, "tokenSource": auditlog.FieldTokenSource, "user": auditlog.FieldUser,
	"decision": auditlog.FieldDecision, "reason": auditlog.FieldReason, "enforced": auditlog.FieldEnforced,
	"status": auditlog.FieldStatus, "robotsURL": auditlog.FieldRobotsURL, "rule": auditlog.FieldRule,
	"ruleLine": auditlog.FieldRuleLine, "error": auditlog.FieldError, "unreachableCause": auditlog.FieldUnreachableCause,
	"usageRule": auditlog.FieldUsageRule, "licenseURL": auditlog.FieldLicenseURL, "lostLines": audit.MarkerLostLines,
	"decisionDeny": auditlog.DecisionDeny, "decisionAllow": auditlog.DecisionAllow, "reasonRule": auditlog.ReasonRule,
}

func renderPage() ([]byte, string) {
	fields, err := json.Marshal(pageFields)
	if err != nil {
		panic(err)
	}
	// The script and style are constants of this package, put in as they
	// are: their hashes are the CSP's.
	html := strings.NewReplacer("/*STYLE*/", pageCSS, "/*SCRIPT*/", pageJS, "/*FIELDS*/", string(fields)).Replace(pageHTML)
	csp := fmt.Sprintf("default-src 'none'; script-src '%s'; style-src '%s'; connect-src 'self'; img-src data:; "+
		"base-uri 'none'; form-action 'self'; frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'",
		hashSource(pageJS), hashSource(pageCSS))
	return []byte(html), csp
}

// hashSource is a CSP hash source for an inline element's text.
func hashSource(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// securityHeaders are the headers of every answer of the live view
// but the stream: its own CSP, no sniffing, no framing, no referrer.
func securityHeaders(w http.ResponseWriter, csp string) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

func servePage(w http.ResponseWriter, _ *http.Request) {
	securityHeaders(w, pageCSP)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(page)
}

// serveLine answers an audit line the ring keeps, by its hex SHA-256, as
// the log has it; 404 says how to find an older one in the log.
func (h *Hub) serveLine(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w, "default-src 'none'")
	v := strings.ToLower(r.PathValue("sha256"))
	var sum [sha256.Size]byte
	if n, err := hex.Decode(sum[:], []byte(v)); err != nil || n != sha256.Size || len(v) != 2*sha256.Size {
		http.Error(w, fmt.Sprintf("robotsproxy live: %q is not the hex SHA-256 of an audit line (64 hex digits)", v), http.StatusBadRequest)
		return
	}
	if line, ok := h.ring.Find(sum); ok {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(append(line, '\n'))
		return
	}
	log := h.opts.AuditLog
	if log == "" {
		log = "AUDIT_LOG"
	}
	http.Error(w, fmt.Sprintf("robotsproxy live: no audit line with SHA-256 %s among the lines this replica keeps (the ring holds the most recent ones). "+
		"In the log it is the line before the one whose prev is that hash:\n  grep -B1 '\"prev\":\"%s\"' %s\n", v, v, log), http.StatusNotFound)
}
