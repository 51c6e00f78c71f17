package release

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// CHANGELOG.md is the one source of the version: its newest release heading
// is what action.yml runs and what the docs and examples name.
var (
	releaseHeading = regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\] - \d{4}-\d{2}-\d{2}\s*$`)
	// What users copy: the action and the images by release tag, or by the
	// moving major or minor tag of a release (v0, v0.1).
	versionRef = regexp.MustCompile(`(khook/khook@|ghcr\.io/khook/khook:)v(\d+(?:\.\d+){0,2}(?:-rc[0-9.]*)?)`)
	// Any tag-like reference, to catch a bare major (`@v1`) that names no release.
	anyRef = regexp.MustCompile(`(khook/khook@|ghcr\.io/khook/khook:)v[0-9][0-9A-Za-z.]*`)
	// The GitLab CI/CD component by its catalog version (the tag without v).
	componentRef = regexp.MustCompile(`khook/khook/khook@(\d[0-9A-Za-z.-]*)`)
)

// changelogReleases returns the released versions, newest first.
func changelogReleases(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(), "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\n## [Unreleased]\n") {
		t.Error("CHANGELOG.md needs a `## [Unreleased]` section (Keep a Changelog)")
	}
	var vs []string
	for _, m := range releaseHeading.FindAllStringSubmatch(string(data), -1) {
		vs = append(vs, m[1])
	}
	if len(vs) == 0 {
		t.Fatal("CHANGELOG.md has no release heading `## [X.Y.Z] - YYYY-MM-DD`")
	}
	return vs
}

func TestActionRunsTheNewestReleaseImage(t *testing.T) {
	newest := changelogReleases(t)[0]
	data, err := os.ReadFile(filepath.Join(repoRoot(), "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Runs struct {
			Image string `yaml:"image"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if want := "docker://ghcr.io/khook/khook:v" + newest; a.Runs.Image != want {
		t.Errorf("action.yml runs.image is %q, want %q (CHANGELOG.md's newest release); run hack/set-version.sh %s", a.Runs.Image, want, newest)
	}
}

func TestDocsNameReleasedVersions(t *testing.T) {
	released := map[string]bool{}
	for _, v := range changelogReleases(t) {
		released[v] = true
	}
	root := repoRoot()
	var files []string
	top, _ := filepath.Glob(filepath.Join(root, "*.md"))
	files = append(files, top...)
	for _, dir := range []string{"docs", "examples", "templates"} {
		filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return nil
		})
	}
	seen := 0
	for _, f := range files {
		if filepath.Base(f) == "CHANGELOG.md" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for i, line := range strings.Split(string(data), "\n") {
			for _, ref := range anyRef.FindAllString(line, -1) {
				seen++
				m := versionRef.FindStringSubmatch(ref)
				if m == nil || !namesRelease(released, m[2]) {
					t.Errorf("%s:%d: %s names no release in CHANGELOG.md; use a full released version (hack/set-version.sh)", rel, i+1, ref)
				}
			}
			for _, m := range componentRef.FindAllStringSubmatch(line, -1) {
				if !namesRelease(released, m[1]) {
					t.Errorf("%s:%d: the component %s names no release in CHANGELOG.md; use a released version (hack/set-version.sh)", rel, i+1, m[0])
				}
			}
		}
	}
	if seen == 0 {
		t.Error("no khook/khook@v… or ghcr.io/khook/khook:v… reference found in the README, docs or examples")
	}
}

// namesRelease: v is a release, or the major/minor line of one.
func namesRelease(released map[string]bool, v string) bool {
	if released[v] {
		return true
	}
	if strings.Count(v, ".") < 2 {
		for r := range released {
			if strings.HasPrefix(r, v+".") {
				return true
			}
		}
	}
	return false
}
