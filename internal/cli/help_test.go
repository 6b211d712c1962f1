package cli

import (
	"flag"
	"regexp"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/build"
	"github.com/robotsproxy/robotsproxy/internal/cli/command"
)

// TestHelpListsEveryCommand: "robotsproxy -h" lists every registered
// command, its summary in one aligned column, then its usage; "robotsproxy
// GROUP -h" lists the group's.
func TestHelpListsEveryCommand(t *testing.T) {
	d := newDispatcher(build.Info{})
	help := d.help()
	column := -1
	for _, c := range append(d.commands, command.Command{Name: "help", Summary: "print this help"}) {
		line := lineWith(help, "  "+c.Name+" ")
		if line == "" || !strings.HasSuffix(line, " "+c.Summary) {
			t.Errorf("help: no line %q ... %q:\n%s", "  "+c.Name, c.Summary, help)
			continue
		}
		if col := len(line) - len(c.Summary); column < 0 {
			column = col
		} else if col != column {
			t.Errorf("help: %q's summary starts at column %d, the others' at %d", c.Name, col, column)
		}
		if c.Name != "help" && !strings.Contains(help, "\n  robotsproxy "+c.Usage+"\n") {
			t.Errorf("help: no usage line %q", "robotsproxy "+c.Usage)
		}
	}
	if !strings.Contains(help, "  audit access-log ") {
		t.Errorf("help leaves out audit access-log:\n%s", help)
	}
	for _, group := range []string{"audit", "ca", "keys"} {
		gh := d.groupHelp(group)
		for _, sub := range d.subcommands(group) {
			c, _ := d.find(group + " " + sub)
			if !strings.Contains(gh, "  "+sub+" ") || !strings.Contains(gh, "robotsproxy "+c.Usage) {
				t.Errorf("%s -h leaves out %s:\n%s", group, sub, gh)
			}
		}
	}
}

// lineWith returns the first line of text that starts with prefix.
func lineWith(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestUsageNamesEveryFlag: each command's usage, which the help and its -h
// print, names every flag the command defines and no other, so that the
// synopsis cannot fall behind the flags.
func TestUsageNamesEveryFlag(t *testing.T) {
	named := regexp.MustCompile(`(?:^|[\s\[|])-([a-z][a-z0-9-]*)`)
	for _, c := range newDispatcher(build.Info{}).commands {
		fs := command.FlagsOf(c)
		if fs == nil {
			t.Errorf("%s: FlagsOf gives no flag set: the command must parse its arguments with its flag set first", c.Name)
			continue
		}
		fs.VisitAll(func(f *flag.Flag) {
			if !strings.Contains(c.Usage, "-"+f.Name+" ") && !strings.Contains(c.Usage, "-"+f.Name+"]") &&
				!strings.Contains(c.Usage, "-"+f.Name+"=") && !strings.HasSuffix(c.Usage, "-"+f.Name) {
				t.Errorf("%s: the usage %q does not name -%s", c.Name, c.Usage, f.Name)
			}
		})
		for _, m := range named.FindAllStringSubmatch(c.Usage, -1) {
			if fs.Lookup(m[1]) == nil {
				t.Errorf("%s: the usage %q names -%s, which is not one of its flags", c.Name, c.Usage, m[1])
			}
		}
	}
}
