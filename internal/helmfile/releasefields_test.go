package helmfile

import (
	"strings"
	"testing"
)

// helmfile v1.8.0's release fields (each accepted by `helmfile build`):
// takeOwnership and rollbackOnFailure (Helm 4's atomic) are carried;
// those used only to uninstall or to print a diff, or that khook does
// anyway, are warnings with the release faithful; those that change what
// is installed are not carried, each with why.
func TestImportHelmfileV1ReleaseFields(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"helmfile.yaml": `repositories:
  - name: r
    url: https://charts.example.com
releases:
  - name: a
    namespace: a
    chart: r/a
    version: 1.0.0
    takeOwnership: true
    rollbackOnFailure: true
    forceConflicts: true
    syncReleaseLabels: true
    deleteWait: true
    deleteTimeout: 300
    cascade: foreground
    skipRefresh: true
    waitRetries: 3
    suppressDiff: true
    trackMode: kubedog
  - name: b
    namespace: b
    chart: r/b
    version: 1.0.0
    enableDNS: true
    plainHttp: true
`})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := string(res.Spec)
	if want := "      atomic: true\n      takeOwnership: true\n"; !strings.Contains(spec, want) {
		t.Errorf("no %q in:\n%s", want, spec)
	}
	for _, r := range res.Releases {
		switch r.Resolved.Name {
		case "a":
			if r.Verdict != Faithful || len(r.Info) != 9 {
				t.Errorf("release a: %s, %d warnings, want faithful and 9: %v %v", r.Verdict, len(r.Info), r.NotCarried, r.Info)
			}
		case "b":
			var why []string
			for _, n := range r.NotCarried {
				why = append(why, n.String())
			}
			all := strings.Join(why, "\n")
			if len(why) != 2 || !strings.Contains(all, "enableDNS: khook renders charts with Helm's default, DNS lookups off") || !strings.Contains(all, "plainHttp: khook reaches an OCI registry over HTTPS") {
				t.Errorf("release b not carried:\n%s", all)
			}
		}
	}
}
