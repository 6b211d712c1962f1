package command

import (
	"context"
	"fmt"
	"os"

	"golang.org/x/term"

	"github.com/robotsproxy/robotsproxy/internal/live"
)

// Watch is "robotsproxy watch": a running serve's decisions as they
// happen, read from its admin listener's live view (/live/events). It
// runs until Ctrl-C (130) or SIGTERM (143); 1 when the admin listener
// cannot be reached or refuses the stream, 2 on usage errors.
var Watch = Command{
	Name:    "watch",
	Summary: "print a running serve's decisions as they happen (its live view)",
	Usage:   "watch [-admin HOST:PORT] [-token T] [-host SITE] [-decision allow|deny|none] [-reason R] [-recent N]",
	run:     runWatch,
}

func runWatch(ctx context.Context, cmd Command, args []string, stdio Stdio) error {
	fs := cmd.flagSet(`Print the decisions a running serve makes, as it makes them, from the live view
of its admin listener (admin_listen): on a terminal one line per decision, in
colour (NO_COLOR turns it off); on a pipe each decision's audit line, exactly
as the audit log has it, one JSON object a line, and {"skipped":N} where the
stream fell behind. Filters apply on the server. A replica of a fleet shows
its own decisions: watch each admin address. Ctrl-C ends it.`, stdio.Stderr)
	admin := fs.String("admin", "127.0.0.1:9090", "the admin listener's `HOST:PORT`; an unspecified host (0.0.0.0, ::) means loopback")
	token := fs.String("token", "", "only decisions for the product token `T` (any case)")
	host := fs.String("host", "", "only requests to `SITE`: a host name, HOST:PORT or an origin such as https://example.com")
	decision := fs.String("decision", "", "only decisions `D`: allow, deny or none")
	reason := fs.String("reason", "", "only decisions for reason `R` (rule, unreachable, host-denied, ...)")
	recent := fs.Int("recent", 10, "first print the `N` most recent decisions the serve keeps that pass the filters")
	if err := cmd.parse(fs, args, stdio.Stdout); err != nil {
		return err
	}
	if err := noArguments(fs); err != nil {
		return err
	}
	if *recent < 0 {
		return usageErr("watch: -recent %d: want 0 or more", *recent)
	}
	f := live.Filter{Recent: *recent}
	for _, v := range []struct {
		list *[]string
		val  string
	}{{&f.Tokens, *token}, {&f.Hosts, *host}, {&f.Decisions, *decision}, {&f.Reasons, *reason}} {
		if v.val != "" {
			*v.list = []string{v.val}
		}
	}
	if _, err := live.ParseFilter(f.Query()); err != nil {
		return usageErr("watch: -%v", err)
	}
	base, err := probeURL(*admin, live.PathEvents)
	if err != nil {
		return usageErr("watch: -admin: %v", err)
	}
	u := base + "?" + f.Query().Encode()
	p := &live.Printer{Out: stdio.Stdout}
	if out, ok := stdio.Stdout.(*os.File); ok && term.IsTerminal(int(out.Fd())) {
		p.Terminal, p.Color = true, os.Getenv("NO_COLOR") == ""
		if w, _, err := term.GetSize(int(out.Fd())); err == nil {
			p.Width = w
		}
	}
	err = live.Follow(ctx, u, func(ev live.Event) error {
		if ev.Name == live.EventHello {
			if h, err := live.Hello(ev); err == nil {
				fmt.Fprintf(stdio.Stderr, "robotsproxy watch: %s at %s\n", h.Describe(), *admin)
			}
			return nil
		}
		return p.Print(ev)
	}, func(err error) {
		fmt.Fprintf(stdio.Stderr, "robotsproxy watch: the stream broke (%v): connecting again\n", err)
	})
	if err != nil {
		return &exitError{1, fmt.Errorf("watch: %w", err)}
	}
	return ctx.Err()
}
