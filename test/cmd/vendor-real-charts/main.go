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
	"sort"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
)

// pin is one chart at one module version.
type pin struct {
	folder string // corpus folder (the chart's name)
	module string // module@version, as the proxy serves it
	dir    string // the chart's directory inside the module
}

var pins = []pin{
	{"metrics-server", "sigs.k8s.io/metrics-server@v0.9.0", "charts/metrics-server"},
	{"gatekeeper", "github.com/open-policy-agent/gatekeeper/v3@v3.17.0", "charts/gatekeeper"},
	{"gatekeeper", "github.com/open-policy-agent/gatekeeper/v3@v3.23.1", "charts/gatekeeper"},
	{"kyverno", "github.com/kyverno/kyverno@v1.13.4", "charts/kyverno"},
	{"sealed-secrets", "github.com/bitnami-labs/sealed-secrets@v0.27.1", "helm/sealed-secrets"},
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
		if err := copyFile(filepath.Join(src, "LICENSE"), filepath.Join(dst, "LICENSE")); err != nil {
			return fmt.Errorf("%s: the module has no LICENSE at its root: %w", p.module, err)
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
	var m struct{ Dir, Error string }
	if jerr := json.Unmarshal(data, &m); jerr != nil || m.Error != "" || err != nil {
		return "", fmt.Errorf("go mod download %s: %v %s", module, err, m.Error)
	}
	return m.Dir, nil
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
