package action

// Exit codes of khook and khook ci alike (docs/cli.md); the one place
// they are defined.
const (
	ExitOK         = 0
	ExitFailure    = 1 // a step failed, the cluster is unreachable, an internal error
	ExitValidation = 2 // bad spec, missing variables, cycle, bad flags
	ExitChanges    = 2 // plan --detailed-exitcode: changes pending
)
