package command

import "github.com/khook/khook/runner/kube/apischema"

// OfflineKubeVersion is the version offline checks use: the one given, else
// apischema.DefaultKubeVersion.
func OfflineKubeVersion(v apischema.KubeVersion) apischema.KubeVersion {
	if v.Major > 0 {
		return v
	}
	d, _ := apischema.ParseKubeVersion(apischema.DefaultKubeVersion)
	return d
}
