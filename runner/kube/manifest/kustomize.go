package manifest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/redact"
)

// kustomizationNames are the file names kustomize accepts, in its order.
var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// RenderKustomization builds a local kustomization directory in-process and
// returns the rendered multi-document YAML. Remote bases are rejected before
// kustomize runs: kustomize would shell out to git for them. Files it reads
// that are sops-encrypted are decrypted in memory (see openManifest).
func RenderKustomization(dir string, r *redact.Redactor) ([]byte, error) {
	return renderKustomization(dir, sopsFS{FileSystem: filesys.MakeFsOnDisk(), red: r})
}

func renderKustomization(dir string, fs filesys.FileSystem) ([]byte, error) {
	if err := checkLocalOnly(dir, map[string]bool{}); err != nil {
		return nil, err
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsRootOnly
	opts.PluginConfig = types.DisabledPluginConfig()
	rm, err := krusty.MakeKustomizer(opts).Run(fs, dir)
	if err != nil {
		return nil, fmt.Errorf("cannot render the kustomization: %v", err)
	}
	return rm.AsYaml()
}

// KustomizationFiles lists, sorted, the files a render of the kustomization
// at dir reads: the render itself, on a file system that records them, so
// the list is what kustomize reads, bases and patches included, and
// nothing else in the tree.
func KustomizationFiles(dir string) ([]string, error) {
	rec := &recordingFS{FileSystem: filesys.MakeFsOnDisk(), read: map[string]bool{}}
	if _, err := renderKustomization(dir, rec); err != nil {
		return nil, err
	}
	// checkLocalOnly reads each kustomization file with os, not fs.
	seen := map[string]bool{}
	var out []string
	for p := range rec.read {
		if abs, err := filepath.Abs(p); err == nil && !seen[abs] {
			if st, err := os.Stat(abs); err == nil && st.Mode().IsRegular() {
				seen[abs] = true
				out = append(out, abs)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// recordingFS is the disk, remembering every file read through it.
type recordingFS struct {
	filesys.FileSystem
	read map[string]bool
}

func (r *recordingFS) ReadFile(path string) ([]byte, error) {
	r.read[path] = true
	return r.FileSystem.ReadFile(path)
}

func (r *recordingFS) Open(path string) (filesys.File, error) {
	r.read[path] = true
	return r.FileSystem.Open(path)
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
