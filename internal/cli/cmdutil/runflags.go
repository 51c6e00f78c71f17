package cmdutil

import (
	"time"

	"github.com/spf13/cobra"
)

// AddRunFlags registers the flags of the commands that run steps (apply,
// destroy): -o, --parallelism and --lock-timeout. verb says what is done
// to a step in the help text ("run", "tear down").
func AddRunFlags(cmd *cobra.Command, output *string, parallelism *int, lockTimeout *time.Duration, verb string) {
	AddOutputFlag(cmd, output)
	cmd.Flags().IntVar(parallelism, "parallelism", 0, verb+" at most N steps at once (0: no limit)")
	cmd.Flags().DurationVar(lockTimeout, "lock-timeout", 0, "wait this long for a state record another run holds (0: fail at once)")
}

// CheckRunFlags rejects values the run flags cannot take (exit 2).
func CheckRunFlags(output string, parallelism int, lockTimeout time.Duration) error {
	if err := CheckOutput(output, OutputText, OutputJSON); err != nil {
		return err
	}
	if parallelism < 0 {
		return FlagErrorf("--parallelism %d: use 0 (no limit) or a positive number", parallelism)
	}
	if lockTimeout < 0 {
		return FlagErrorf("--lock-timeout %s: use 0 (fail at once) or a positive duration", lockTimeout)
	}
	return nil
}
