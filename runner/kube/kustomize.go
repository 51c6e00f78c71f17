package kube

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/internal/redact"
)

// kustomizationNames are the file names kustomize accepts, in its order.
var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// RenderKustomization builds a local kustomization directory in-process and
// returns the rendered multi-document YAML. Remote bases are rejected before
// kustomize runs: kustomize would shell out to git for them. Files it reads
// that are sops-encrypted are decrypted in memory (see openManifest).
func RenderKustomization(dir string, r *redact.Redactor) ([]byte, error) {
	if err := checkLocalOnly(dir, map[string]bool{}); err != nil {
		return nil, err
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsRootOnly
	opts.PluginConfig = types.DisabledPluginConfig()
	rm, err := krusty.MakeKustomizer(opts).Run(sopsFS{FileSystem: filesys.MakeFsOnDisk(), red: r}, dir)
	if err != nil {
		return nil, fmt.Errorf("cannot render the kustomization: %v", err)
	}
	return rm.AsYaml()
}

// sopsFS is the disk as kustomize reads it, with sops files opened in
// memory: the plaintext never reaches the disk.
type sopsFS struct {
	filesys.FileSystem
	red *redact.Redactor
}

func (f sopsFS) ReadFile(path string) ([]byte, error) {
	data, err := f.FileSystem.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return openManifest(path, data, f.red)
}

// checkLocalOnly walks the kustomization at dir and every local directory it
// references, failing on the first entry that is not on disk.
func checkLocalOnly(dir string, seen map[string]bool) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if seen[abs] {
		return nil
	}
	seen[abs] = true
	info, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("cannot read the kustomization directory %s: %v", dir, unwrapPathError(err))
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a directory: kustomize: takes a directory holding a kustomization.yaml", dir)
	}
	file, data, err := readKustomization(abs)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	var k types.Kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return fmt.Errorf("cannot parse %s: %v", file, err)
	}
	var entries []string
	entries = append(entries, k.Resources...)
	entries = append(entries, k.Bases...)
	entries = append(entries, k.Components...)
	entries = append(entries, k.Crds...)
	entries = append(entries, k.Generators...)
	entries = append(entries, k.Transformers...)
	entries = append(entries, k.Validators...)
	for _, e := range entries {
		if looksRemote(e) {
			return fmt.Errorf("kustomize: remote base %s is not supported: khook renders kustomizations in-process without git; vendor the base locally", e)
		}
		p := e
		if !filepath.IsAbs(p) {
			p = filepath.Join(abs, e)
		}
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("kustomize: %s lists %s, which does not exist locally (khook renders kustomizations without git: remote bases must be vendored)", file, e)
		}
		if st.IsDir() {
			if err := checkLocalOnly(p, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

func readKustomization(dir string) (string, []byte, error) {
	for _, n := range kustomizationNames {
		p := filepath.Join(dir, n)
		data, err := os.ReadFile(p)
		if err == nil {
			return p, data, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", nil, fmt.Errorf("cannot read %s: %v", p, unwrapPathError(err))
		}
	}
	return "", nil, fmt.Errorf("no kustomization.yaml, kustomization.yml or Kustomization file")
}

// looksRemote recognises the URL forms kustomize fetches with git or HTTP.
func looksRemote(e string) bool {
	if strings.Contains(e, "://") || strings.HasPrefix(e, "git@") || strings.Contains(e, "?ref=") ||
		strings.Contains(e, ".git//") || strings.HasSuffix(e, ".git") {
		return true
	}
	for _, host := range []string{"github.com/", "gitlab.com/", "bitbucket.org/", "dev.azure.com/"} {
		if strings.HasPrefix(e, host) {
			return true
		}
	}
	return false
}
