// Package state keeps khook's run-state record: a Secret that journals every
// step's input hash and outcome so a re-run resumes, a Lease beside it so two
// runs against the same record cannot interleave, and the status view of both.
//
// May import: runner/kube, model, spec, redact and client-go; no renderer.
package state

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/khook/khook/runner/kube/manifest"
	"github.com/khook/khook/spec"
)

// hashPrefix names the algorithm, so a future change of it reads as "changed".
const hashPrefix = "sha256:"

// Hash is a step's input hash: the canonical JSON of its action block after
// substitution (key order, quoting and comments do not matter; the scheduling
// fields needs, when, timeout, retries, retryDelay and onError are not
// inputs) plus the content of every local file the block references. Remote
// content (url sources, OCI and repo charts) counts by reference only.
// Relative paths resolve against baseDir.
func Hash(step *spec.Step, baseDir string) (string, error) {
	if step == nil {
		return "", fmt.Errorf("cannot hash a nil step")
	}
	block := step.Block()
	if block == nil {
		return "", fmt.Errorf("step %s has no action block (helm, apply, delete, patch, wait, rollout or job)", step.Name)
	}
	canon, err := canonicalJSON(block)
	if err != nil {
		return "", fmt.Errorf("step %s: cannot encode its %s block for the state record: %w", step.Name, step.Type(), err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "type %s\n", step.Type())
	h.Write(canon)
	h.Write([]byte{'\n'})
	for _, ref := range step.Inputs() {
		if err := hashPath(h, ref, baseDir); err != nil {
			return "", fmt.Errorf("step %s: cannot hash %s %s for the state record: %w", step.Name, ref.What, ref.Path, err)
		}
	}
	return hashPrefix + hex.EncodeToString(h.Sum(nil)), nil
}

// canonicalJSON round-trips v through a generic value: encoding/json writes
// map keys sorted, so equal documents give equal bytes whatever their order.
func canonicalJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return nil, err
	}
	return json.Marshal(generic)
}

// hashPath writes a file's content, or every regular file of a directory in
// sorted order with its relative path, into h.
func hashPath(h hash.Hash, ref spec.Input, baseDir string) error {
	p := ref.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(baseDir, p)
	}
	info, err := os.Stat(p)
	if err != nil {
		return pathError(err)
	}
	fmt.Fprintf(h, "%s %s\n", ref.What, ref.Path)
	if !info.IsDir() {
		return hashFile(h, p)
	}
	var files []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return pathError(err)
	}
	if ref.What == spec.InputKustomize {
		files = append(files, outside(p, files)...)
	}
	sort.Strings(files)
	for _, f := range files {
		rel, _ := filepath.Rel(p, f)
		fmt.Fprintf(h, "file %s\n", filepath.ToSlash(rel))
		if err := hashFile(h, f); err != nil {
			return err
		}
	}
	return nil
}

// outside lists what the kustomization at dir reads beyond dir (a base or
// patch at ../base): a change there changes the step's output, so it must
// change its hash. A kustomization that does not render adds nothing (the
// step's own render says why).
func outside(dir string, inside []string) []string {
	read, err := manifest.KustomizationFiles(dir)
	if err != nil {
		return nil
	}
	own := map[string]bool{}
	for _, f := range inside {
		if abs, err := filepath.Abs(f); err == nil {
			own[abs] = true
		}
	}
	var out []string
	for _, f := range read {
		if !own[f] {
			out = append(out, f)
		}
	}
	return out
}

func hashFile(h hash.Hash, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return pathError(err)
	}
	defer f.Close()
	n, err := io.Copy(h, f)
	if err != nil {
		return pathError(err)
	}
	fmt.Fprintf(h, "\n%d bytes\n", n)
	return nil
}

// pathError turns Go's "open /abs/path: reason" into "/abs/path: reason".
func pathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}

// SpecHash is the whole-spec hash: the canonical spec document (envelope,
// defaults, state block, every step with its scheduling fields) plus each
// step's input hash, so an edited local file changes it too.
func SpecHash(s *spec.Spec, stepHashes map[string]string) (string, error) {
	canon, err := canonicalJSON(s)
	if err != nil {
		return "", fmt.Errorf("cannot encode spec %s for the state record: %w", s.Metadata.Name, err)
	}
	h := sha256.New()
	h.Write(canon)
	for _, st := range s.Steps {
		fmt.Fprintf(h, "\n%s %s", st.Name, stepHashes[st.Name])
	}
	return hashPrefix + hex.EncodeToString(h.Sum(nil)), nil
}
