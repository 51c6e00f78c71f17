package cmdutil

import (
	"github.com/spf13/pflag"

	"github.com/khook/khook/runner/kube"
)

// AddKubeVersionFlag adds --kube-version: the Kubernetes version offline
// checks (removed and deprecated API versions) assume.
func AddKubeVersionFlag(fs *pflag.FlagSet, v *string) {
	fs.StringVar(v, "kube-version", kube.DefaultKubeVersion,
		"Kubernetes `VERSION` offline checks assume (removed and deprecated API versions)")
}

// KubeVersion parses --kube-version ("" is the default).
func KubeVersion(s string) (kube.KubeVersion, error) {
	if s == "" {
		s = kube.DefaultKubeVersion
	}
	v, err := kube.ParseKubeVersion(s)
	if err != nil {
		return v, FlagErrorf("--kube-version: %v", err)
	}
	return v, nil
}
