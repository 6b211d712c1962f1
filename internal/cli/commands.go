package cli

import (
	"github.com/robotsproxy/robotsproxy/internal/build"
	"github.com/robotsproxy/robotsproxy/internal/cli/command"
)

// commands are robotsproxy's commands, in the order "robotsproxy -h" lists
// them. A new command is a file in internal/cli/command that declares its
// Command value, and a line here; a name of two words ("ipranges update")
// puts it in a group, which needs nothing more.
func commands(b build.Info) []command.Command {
	return []command.Command{
		command.Serve(b),
		command.Check,
		command.AuditReport,
		command.AuditVerify,
		command.AuditShow,
		command.AuditAccessLog,
		command.IPRangesUpdate,
		command.IPRangesShow,
		command.CAInit,
		command.CAShow,
		command.KeysInit,
		command.KeysDirectory,
		command.HashPassword,
		command.Healthcheck,
		command.Watch,
		command.Version(b),
	}
}

// wants says what a group run without a subcommand wants, where that is
// more than its list of subcommands: the commonest forms, as scripts and
// docs know them.
var wants = map[string]string{
	"audit": "a subcommand (report, verify, show) or access-log",
	"ca":    `"ca init -cert FILE -key FILE" or "ca show"`,
	"keys":  `"keys init DIR" or "keys directory -o DIR"`,
}
