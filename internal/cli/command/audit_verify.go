package command

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/audit/verify"
)

// AuditVerify is "robotsproxy audit verify": exit 0 when everything
// verifies, 1 when anything does not, 2 on usage or I/O errors. Without
// an archive it checks the chain only, and says so on stderr.
var AuditVerify = Command{
	Name:    "audit verify",
	Summary: "verify an audit log's hash chain and re-decide its decisions",
	Usage: "audit verify [-archive DIR] [-config FILE] [-chain-only] [-genesis] [-allow-unverifiable] " +
		"[-checkpoints FILE [-checkpoint-key FILE]] [-head SHA] LOG...",
	run: runAuditVerify,
}

func runAuditVerify(_ context.Context, cmd Command, args []string, stdio Stdio) error {
	fs := cmd.flagSet(`Verify the hash chain of the audit logs (oldest first), and re-decide every
decision line from the robots.txt archive, and check every signature_keyid
against the key directories archived at each start and reload (the key must
have been published, and its nbf/exp must cover signature_created). Without
an archive (-archive or audit.archive_dir) only the chain is checked, as with
-chain-only. Lines of
the proxy's own log (JSON lines starting with "level") are counted as
operational and skipped. Exit 0 when everything verifies, 1 when anything
does not.`, stdio.Stderr)
	archive := fs.String("archive", "", "robots.txt archive `DIR` (default: audit.archive_dir of -config)")
	cfgPath := fs.String("config", defaultConfig, "configuration `FILE` that names the archive when -archive is not given, and the exempt_hosts that lines with reason override are checked against")
	genesis := fs.Bool("genesis", false, "require the first line to start the chain (prev of 64 zeros)")
	allowUnverifiable := fs.Bool("allow-unverifiable", false, "exit 0 even when some decision lines cannot be re-decided (no archived body or fetch record)")
	chainOnly := fs.Bool("chain-only", false, "check the hash chain only, without re-deciding decisions (chosen when no archive is given or configured)")
	checkpoints := fs.String("checkpoints", "", "checkpoint log `FILE` (audit.checkpoint_file): the chain must pass through every checkpoint and not end before the last")
	ckKey := fs.String("checkpoint-key", "", "`FILE` holding the checkpoints' HMAC key (audit.checkpoint_hmac_key_file): every checkpoint must be signed with it")
	head := fs.String("head", "", "the chain must end exactly at this head (64 hex digits, kept elsewhere)")
	if err := cmd.parse(fs, args, stdio.Stdout); err != nil {
		return err
	}
	anchors, err := verifyAnchors(*checkpoints, *ckKey, *head)
	if err != nil {
		return &exitError{2, fmt.Errorf("audit verify: %w", err)}
	}
	if fs.NArg() == 0 {
		return usageErr("audit verify: want at least one LOG, oldest first\n%s", cmd.usage())
	}
	dir, err := archiveDir(fs, *archive, *cfgPath)
	if err != nil {
		return &exitError{2, fmt.Errorf("audit verify: %w", err)}
	}
	var exempt []string // nil: override lines are unverifiable
	if isSet(fs, "config") {
		cfg, _, err := loadConfig(*cfgPath, true, zerolog.Nop())
		if err != nil {
			return &exitError{2, fmt.Errorf("audit verify: %w", err)}
		}
		exempt = append([]string{}, cfg.ExemptHosts...)
	}
	if dir == "" && !*chainOnly {
		*chainOnly = true
		fmt.Fprintln(stdio.Stderr, "audit verify: no robots.txt archive (-archive DIR or audit.archive_dir): checking the hash chain only (-chain-only)")
	}
	if *chainOnly {
		dir = ""
	}
	out := bufio.NewWriter(stdio.Stdout)
	anchors.Archive, anchors.ChainOnly, anchors.Genesis, anchors.ExemptHosts = dir, *chainOnly, *genesis, exempt
	anchors.Report = func(p verify.Problem) { fmt.Fprintln(out, p) }
	res, err := verify.Verify(fs.Args(), anchors)
	if err != nil {
		out.Flush()
		return &exitError{2, fmt.Errorf("audit verify: %w", err)}
	}
	ok := res.OK(*allowUnverifiable)
	writeVerifySummary(out, res, dir, *chainOnly, ok)
	if err := out.Flush(); err != nil {
		return &exitError{2, fmt.Errorf("audit verify: %w", err)}
	}
	if !ok {
		return &exitError{1, errors.New("audit verify: the logs do not verify")}
	}
	return nil
}

// writeVerifySummary writes the counts and the chain's start and head.
func writeVerifySummary(w io.Writer, r *verify.VerifyResult, dir string, chainOnly, ok bool) {
	if dir == "" {
		dir = "none"
	}
	fmt.Fprintf(w, "lines        %d in %d files\n", r.Lines, r.Files)
	if chainOnly {
		fmt.Fprintf(w, "decisions    not re-decided (-chain-only: the hash chain only)\n")
		fmt.Fprintf(w, "audit lines  %d, chained\n", r.ChainOnly)
	} else {
		fmt.Fprintf(w, "decisions    %d: %d verified, %d differ, %d on an altered archive, %d unverifiable (archive %s)\n",
			r.Decisions, r.Verified, r.Differ, r.Altered, r.Unverifiable, dir)
		fmt.Fprintf(w, "other lines  %d, chained only\n", r.ChainOnly)
	}
	if r.Operational > 0 {
		fmt.Fprintf(w, "operational  %d of the proxy's own log messages (\"level\" lines), not audit lines: skipped\n", r.Operational)
	}
	if r.Signed > 0 && !chainOnly {
		fmt.Fprintf(w, "signatures   %d signed lines: %d by a key of the archived directory, %d not\n", r.Signed, r.SignedVerified, r.Signatures)
	}
	fmt.Fprintf(w, "bad lines    %d\n", r.BadLines)
	if r.Lines > 0 {
		start := "continues a chain whose earlier lines were not given"
		if r.StartPrev == [sha256.Size]byte{} {
			start = "genesis: the logs start the chain"
		}
		fmt.Fprintf(w, "chain start  %s:1, prev %x (%s)\n", r.StartFile, r.StartPrev, start)
		fmt.Fprintf(w, "chain head   %x (the next line's prev: keep it elsewhere to anchor the chain)\n", r.Head)
	}
	if r.Checkpoints > 0 || r.Anchors > 0 {
		fmt.Fprintf(w, "anchors      %d of %d checkpoints passed, %d anchor problems\n", r.CheckpointsPassed, r.Checkpoints, r.Anchors)
	}
	if r.ChainBreaks == 0 {
		fmt.Fprintf(w, "chain        intact\n")
	} else {
		fmt.Fprintf(w, "chain        %d broken links, the first at %s:%d\n", r.ChainBreaks, r.FirstBreak.File, r.FirstBreak.Line)
	}
	verdict := "OK: every line verifies"
	if chainOnly {
		verdict = "OK: the chain holds"
	}
	if !ok {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "result       %s\n", verdict)
}
