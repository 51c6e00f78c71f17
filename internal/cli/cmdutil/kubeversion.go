package cmdutil

import (
	"github.com/spf13/pflag"

	"github.com/khook/khook/runner/kube/apischema"
)

// AddKubeVersionFlag adds --kube-version: the Kubernetes version offline
// checks (removed and deprecated API versions) assume. The schemas objects
// are checked against are the ones khook carries, whatever the version.
func AddKubeVersionFlag(fs *pflag.FlagSet, v *string) {
	fs.StringVar(v, "kube-version", apischema.DefaultKubeVersion,
		"Kubernetes `VERSION` offline checks assume for removed and deprecated API versions (the schemas are the built-in 1.36 ones)")
}

// KubeVersion parses --kube-version ("" is the default).
func KubeVersion(s string) (apischema.KubeVersion, error) {
	if s == "" {
		s = apischema.DefaultKubeVersion
	}
	v, err := apischema.ParseKubeVersion(s)
	if err != nil {
		return v, FlagErrorf("--kube-version: %v", err)
	}
	return v, nil
}
