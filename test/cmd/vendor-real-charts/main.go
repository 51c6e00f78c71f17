// Command vendor-real-charts packages the public charts of khook's
// real-chart corpus into test/testdata/real-charts, from their projects' Go
// modules as the Go module proxy serves them (pinned below, checked against
// the checksum database like any module). Each chart folder gets its
// packages, the upstream LICENSE and nothing else; SHA256SUMS lists them.
//
//	go run ./test/cmd/vendor-real-charts   # from the repository root
//
// The packages are committed; rerun only to change a pin (then update
// test/testdata/real-charts/SOURCES.md).
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
)

// pin is one chart at one module version.
type pin struct {
	folder string // corpus folder (the chart's name)
	module string // module@version, as the proxy serves it
	dir    string // the chart's directory inside the module
	// version, when set, is the chart version (and appVersion) the
	// project's release packaging stamps on a chart whose repository
	// carries a placeholder such as 0.0.0, as `helm package --version
	// --app-version` does. Nothing else of the chart changes.
	version string
	// license is the file at the module root that licenses the chart, when
	// not LICENSE.
	license string
}

var pins = []pin{
	{folder: "metrics-server", module: "sigs.k8s.io/metrics-server@v0.9.0", dir: "charts/metrics-server"},
	{folder: "gatekeeper", module: "github.com/open-policy-agent/gatekeeper/v3@v3.17.0", dir: "charts/gatekeeper"},
	{folder: "gatekeeper", module: "github.com/open-policy-agent/gatekeeper/v3@v3.23.1", dir: "charts/gatekeeper"},
	{folder: "kyverno", module: "github.com/kyverno/kyverno@v1.13.4", dir: "charts/kyverno"},
	{folder: "sealed-secrets", module: "github.com/bitnami-labs/sealed-secrets@v0.27.1", dir: "helm/sealed-secrets"},
	{folder: "sealed-secrets", module: "github.com/bitnami-labs/sealed-secrets@v0.40.0", dir: "helm/sealed-secrets"},
	{folder: "external-dns", module: "sigs.k8s.io/external-dns@v0.23.0", dir: "charts/external-dns", license: "LICENSE.md"},
	{folder: "metallb", module: "go.universe.tf/metallb@v0.15.2", dir: "charts/metallb"},
	{folder: "metallb", module: "go.universe.tf/metallb@v0.16.2", dir: "charts/metallb"},
	{folder: "descheduler", module: "sigs.k8s.io/descheduler@v0.36.0", dir: "charts/descheduler"},
	{folder: "local-path-provisioner", module: "github.com/rancher/local-path-provisioner@v0.0.30", dir: "deploy/chart/local-path-provisioner"},
	{folder: "kueue", module: "sigs.k8s.io/kueue@v0.17.0", dir: "charts/kueue"},
	{folder: "karpenter", module: "github.com/aws/karpenter-provider-aws@v1.14.3", dir: "charts/karpenter"},
	{folder: "karpenter", module: "github.com/aws/karpenter-provider-aws@v1.15.1", dir: "charts/karpenter"},
	{folder: "vertical-pod-autoscaler", module: "k8s.io/autoscaler/vertical-pod-autoscaler@v1.7.3", dir: "charts/vertical-pod-autoscaler"},
	{folder: "vertical-pod-autoscaler", module: "k8s.io/autoscaler/vertical-pod-autoscaler@v1.8.1", dir: "charts/vertical-pod-autoscaler"},
	{folder: "flagger", module: "github.com/fluxcd/flagger@v1.36.1", dir: "charts/flagger"},
	{folder: "podinfo", module: "github.com/fluxcd/flagger@v1.36.1", dir: "charts/podinfo"},
	{folder: "flannel", module: "github.com/flannel-io/flannel@v0.28.10", dir: "chart/kube-flannel"},
	{folder: "cilium", module: "github.com/cilium/cilium@v1.15.19", dir: "install/kubernetes/cilium"},
	{folder: "dapr", module: "github.com/dapr/dapr@v1.14.0", dir: "charts/dapr", version: "1.14.0"},
	// production/ is Apache-2.0 (LICENSING.md); the rest of loki is AGPL.
	{folder: "loki", module: "github.com/grafana/loki/v3@v3.7.8", dir: "production/helm/loki", license: "LICENSING.md"},
	{folder: "cert-manager", module: "github.com/cert-manager/cert-manager@v1.21.2", dir: "deploy/charts/cert-manager", version: "v1.21.2"},
	{folder: "trust-manager", module: "github.com/cert-manager/trust-manager@v0.25.0", dir: "deploy/charts/trust-manager", version: "v0.25.0"},
	{folder: "kro", module: "github.com/kubernetes-sigs/kro@v0.9.3", dir: "helm", version: "0.9.3"},
	{folder: "kro", module: "github.com/kubernetes-sigs/kro@v0.9.4", dir: "helm", version: "0.9.4"},
}

const out = "test/testdata/real-charts"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "vendor-real-charts:", err)
		os.Exit(1)
	}
}

func run() error {
	var sums []string
	for _, p := range pins {
		src, err := download(p.module)
		if err != nil {
			return err
		}
		ch, err := loader.LoadDir(filepath.Join(src, p.dir))
		if err != nil {
			return fmt.Errorf("%s: cannot load the chart in %s: %w", p.module, p.dir, err)
		}
		if p.version != "" {
			ch.Metadata.Version, ch.Metadata.AppVersion = p.version, p.version
		}
		if err := ch.Validate(); err != nil {
			return fmt.Errorf("%s: %w", p.module, err)
		}
		dst := filepath.Join(out, p.folder)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		tgz, err := chartutil.Save(ch, dst)
		if err != nil {
			return fmt.Errorf("%s: cannot package: %w", p.module, err)
		}
		license := p.license
		if license == "" {
			license = "LICENSE"
		}
		if err := copyFile(filepath.Join(src, license), filepath.Join(dst, license)); err != nil {
			return fmt.Errorf("%s: the module has no %s at its root: %w", p.module, license, err)
		}
		sum, err := fileSum(tgz)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(out, tgz)
		sums = append(sums, fmt.Sprintf("%s  %s", sum, rel))
		fmt.Printf("%s %s from %s/%s\n", ch.Metadata.Name, ch.Metadata.Version, p.module, p.dir)
	}
	sort.Strings(sums)
	var b bytes.Buffer
	for _, s := range sums {
		b.WriteString(s + "\n")
	}
	return os.WriteFile(filepath.Join(out, "SHA256SUMS"), b.Bytes(), 0o644)
}

// download fetches a module through the Go module proxy and returns its
// directory in the module cache.
func download(module string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module)
	cmd.Stderr = os.Stderr
	data, err := cmd.Output()
	var m struct{ Dir, Error, Sum string }
	if jerr := json.Unmarshal(data, &m); jerr != nil {
		return "", fmt.Errorf("go mod download %s: %v", module, err)
	}
	if m.Dir == "" && m.Sum != "" && newerGo.MatchString(m.Error) {
		// A module that wants a newer Go than this toolchain is still
		// downloaded, verified (Sum) and extracted; only its go directive
		// is refused, and no Go code of it is built here.
		m.Dir, m.Error = extracted(module), ""
	}
	if m.Error != "" || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %v %s", module, err, m.Error)
	}
	return m.Dir, nil
}

var newerGo = regexp.MustCompile(`requires go >= \S+ \(running go`)

// extracted is where the module cache keeps module@version: upper-case
// letters become "!" and the lower-case letter, as the go command escapes
// them.
func extracted(module string) string {
	var b strings.Builder
	for _, r := range module {
		if unicode.IsUpper(r) {
			b.WriteString("!" + string(unicode.ToLower(r)))
			continue
		}
		b.WriteRune(r)
	}
	out, _ := exec.Command("go", "env", "GOMODCACHE").Output()
	return filepath.Join(strings.TrimSpace(string(out)), b.String())
}

func fileSum(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", sha256.Sum256(data)), nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	o, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(o, in); err != nil {
		o.Close()
		return err
	}
	return o.Close()
}
