package importer

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// LocalChartVersion is why a version given with a local chart is not
// written, for both importers' note: Helm ignores --version for a chart
// on disk (action.ChartPathOptions.LocateChart returns the path as it
// is), and the spec refuses version: there. dir is the chart's directory;
// its Chart.yaml, when there, says which version Helm installs.
func LocalChartVersion(dir, version string) string {
	why := "Helm ignores --version for a chart on disk, so it is not written"
	var meta struct{ Version string }
	if b, err := os.ReadFile(filepath.Join(dir, "Chart.yaml")); err == nil && yaml.Unmarshal(b, &meta) == nil && meta.Version != "" {
		if strings.TrimPrefix(strings.TrimSpace(version), "v") == strings.TrimPrefix(meta.Version, "v") {
			why += "; its Chart.yaml has the same version"
		} else {
			why += "; its Chart.yaml says " + meta.Version + ", which is what Helm installs"
		}
	}
	return why
}

// RepoVar is the required variable that stands for the URL of a chart
// repository the source names but never adds (why: where helm finds it
// instead): both importers ask for it rather than guess a URL from a
// name. The description names the repository, which the helmfile
// comparison reads back.
func RepoVar(repo string, from Loc, why string) *Var {
	return &Var{Name: "HELM_REPO_" + strings.ToUpper(nonWord.ReplaceAllString(repo, "_")), Required: true, From: from,
		Description: "the URL of helm repository " + repo + " (" + why + ")", Example: "https://charts.example.com", Format: "url"}
}

var nonWord = regexp.MustCompile(`[^A-Za-z0-9]`)

// GitRepo carries a helm-git repository (git+https://…@path?ref=…) into h,
// whose Repo holds it, as helm-git reads it: without ref= it reads master,
// so the spec (which wants a ref) says ref=master, and the returned note
// says so; unless depupdate=0 helm-git runs helm dependency update, so the
// step resolves dependencies without a lock too. Anything else: "".
func GitRepo(h *OutHelm) (note string) {
	if !strings.HasPrefix(h.Repo, "git+") {
		return ""
	}
	base, query, _ := strings.Cut(h.Repo, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return ""
	}
	if q.Get("depupdate") != "0" {
		h.DependencyUpdate = true
	}
	if q.Has("ref") {
		return ""
	}
	sep := "?"
	if query != "" {
		sep = "?" + query + "&"
	}
	h.Repo = base + sep + "ref=master"
	return "names no ref=, so helm-git reads branch master and the spec says ref=master: pin a tag or commit"
}

// Verify is helm's --verify with --keyring (keyring: the file as the spec
// names it, "" when none was given; at: where the file is at import):
// the verify: a helm step writes, or why it cannot be carried.
func Verify(h *OutHelm, keyring, at string) (*OutVerify, string) {
	local := strings.HasPrefix(h.Chart, "./") || strings.HasPrefix(h.Chart, "../") || strings.HasPrefix(h.Chart, "/")
	switch {
	case local && !strings.HasSuffix(h.Chart, ".tgz"):
		return nil, "helm verifies only a packaged chart and refuses it for a chart folder, so the source's command fails: drop it, or package and sign the chart"
	case keyring == "":
		return nil, "helm verifies with ~/.gnupg/pubring.gpg, a keyring of the machine it runs on: commit the public keyring and name it (--keyring, keyring:), then import again"
	}
	if _, err := os.Stat(at); err != nil {
		return nil, "the keyring " + keyring + " is not there at import: commit the public keyring, then import again"
	}
	return &OutVerify{Provenance: OutProvenance{Keyring: keyring}}, ""
}

// Why a chart source's setting is not carried, as both importers say it.
const (
	WhyTLS       = "khook checks a chart repository's certificate against the system's CAs (SSL_CERT_FILE or SSL_CERT_DIR adds one) and has no per-step TLS settings"
	WhyDNS       = "khook renders charts with Helm's default, DNS lookups off: a chart that calls getHostByName renders differently"
	WhyPlainHTTP = "khook reaches an OCI registry over HTTPS, plain HTTP only on a loopback address"
)
