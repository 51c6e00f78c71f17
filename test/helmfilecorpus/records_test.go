package helmfilecorpus

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/khook/khook/test/helmcli"
	"github.com/khook/khook/test/helmfilecli"
)

// Building the pinned helmfile from source costs about 1,300 CPU-seconds,
// a quarter of a run from nothing on two cores (#50), only to print what
// it printed last time. So the comparison reads helmfile's output from a
// record when the record is fresh: made by the same helmfile and helm, of
// inputs whose hash (every file of the corpus folder, the entry's
// corpus.yaml fields, helmfile's arguments and environment) is unchanged.
// Any other case runs the real helmfile, so the comparison is never weaker
// than the live one; TestHelmfileRecordsAreFresh says which records to
// make again.

var record = flag.Bool("record", false, "run the real helmfile on every corpus input and rewrite its record in "+recordsDir)

// recordsDir holds one record per corpus input: recordsDir/<dir>/<input>.
const recordsDir = corpusDir + "/helmfile-build"

// recordCommand is the one command that makes the records again.
const recordCommand = "go test -count=1 ./test/helmfilecorpus -run TestImportMatchesHelmfile -record"

// The placeholders of the paths that differ from run to run: the copied
// corpus folder (root), the test's directory above it, which holds HOME and
// helmfile's cache, and the helm CLI in the user cache (helmfile prints
// its helmBinary).
const (
	rootPlaceholder = "<khook-test-root>"
	tmpPlaceholder  = "<khook-test-tmp>"
	helmPlaceholder = "<khook-test-helm>"
)

// buildResult is what the comparison takes from helmfile: the stdout of
// `helmfile build --embed-values`, or why helmfile refused the input.
type buildResult struct {
	out     []byte
	refusal string // "" when built
}

func (b buildResult) err() error {
	if b.refusal == "" {
		return nil
	}
	return errors.New(b.refusal)
}

// recordFile is a record: its header and helmfile's stdout with the
// run's paths replaced by placeholders.
type recordFile struct {
	helmfile, helm, sum string
	refusal             string
	body                []byte
}

const recordLead = "# helmfile build --embed-values of "

// encode writes the header (comment lines, ending at a bare "#") and the
// body verbatim, so that the file is still YAML and reads back exactly.
func (r recordFile) encode(name string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s%s, recorded by test/helmfilecorpus: %s\n", recordLead, name, recordCommand)
	fmt.Fprintf(&b, "# %s is the copied corpus folder, %s the test's directory that holds it, HOME and helmfile's cache, %s the helm CLI\n", rootPlaceholder, tmpPlaceholder, helmPlaceholder)
	fmt.Fprintf(&b, "# helmfile: %s\n# helm: %s\n# inputs-sha256: %s\n", r.helmfile, r.helm, r.sum)
	if r.refusal != "" {
		fmt.Fprintf(&b, "# refused: %s\n", strconv.Quote(r.refusal))
	}
	b.WriteString("#\n")
	b.Write(r.body)
	return b.Bytes()
}

func decodeRecord(data []byte) (recordFile, error) {
	var r recordFile
	rest := data
	for {
		line, after, ok := bytes.Cut(rest, []byte("\n"))
		if !ok {
			return r, errors.New("its header does not end (no line \"#\")")
		}
		rest = after
		if string(line) == "#" {
			break
		}
		k, v, _ := strings.Cut(strings.TrimPrefix(string(line), "# "), ": ")
		switch k {
		case "helmfile":
			r.helmfile = v
		case "helm":
			r.helm = v
		case "inputs-sha256":
			r.sum = v
		case "refused":
			s, err := strconv.Unquote(v)
			if err != nil {
				return r, fmt.Errorf("its refused: line is not a quoted string: %v", err)
			}
			r.refusal = s
		}
	}
	r.body = rest
	return r, nil
}

// toRecord replaces the run's paths with placeholders; it refuses output
// in which a placeholder already stands, which could not read back.
func toRecord(b buildResult, root, helm string) (body []byte, refusal string, _ error) {
	for _, s := range []string{string(b.out), b.refusal} {
		for _, p := range []string{rootPlaceholder, tmpPlaceholder, helmPlaceholder} {
			if strings.Contains(s, p) {
				return nil, "", fmt.Errorf("helmfile's output contains %s itself, so a record of it would not read back", p)
			}
		}
	}
	// root before the directory that holds it: the replacer tries its
	// strings in order.
	r := strings.NewReplacer(root, rootPlaceholder, filepath.Dir(root), tmpPlaceholder, helm, helmPlaceholder)
	return []byte(r.Replace(string(b.out))), r.Replace(b.refusal), nil
}

// result is the record with this run's paths put back.
func (r recordFile) result(root, helm string) buildResult {
	rp := strings.NewReplacer(rootPlaceholder, root, tmpPlaceholder, filepath.Dir(root), helmPlaceholder, helm)
	return buildResult{out: []byte(rp.Replace(string(r.body))), refusal: rp.Replace(r.refusal)}
}

func recordPath(e entry, in string) string {
	return filepath.Join(recordsDir, e.Dir, filepath.FromSlash(in))
}

// inputsSum hashes everything helmfile's output depends on but the two
// binaries (the header names those): every file of the entry's folder
// (path and content, in path order), the input, the entry's corpus.yaml
// fields, helmfile's arguments, and the environment env gives it with its
// temporary paths as placeholders. PATH is left out: it differs from
// machine to machine and matters only to exec, which no input runs.
func inputsSum(src string, e entry, in string) (string, error) {
	h := sha256.New()
	field := func(k, v string) { fmt.Fprintf(h, "%s %d %s\n", k, len(v), v) }
	field("dir", e.Dir)
	field("input", in)
	field("inputs", strings.Join(e.Inputs, "\n"))
	field("environment", e.Environment)
	field("allowExec", strconv.FormatBool(e.AllowExec))
	root := filepath.Join(tmpPlaceholder, e.Dir)
	var vars []string
	for _, kv := range env(root, e.Env) {
		if !strings.HasPrefix(kv, "PATH=") {
			vars = append(vars, kv)
		}
	}
	slices.Sort(vars)
	field("env", strings.Join(vars, "\n"))
	field("list", strings.Join(helmfileArgs(helmPlaceholder, in, e, listArgs...), " "))
	field("build", strings.Join(helmfileArgs(helmPlaceholder, in, e, buildArgs...), " "))
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file: the corpus holds files only", path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		field("file", filepath.ToSlash(rel))
		field("content", string(data))
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("cannot hash the corpus folder %s: %w", src, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// helmVersion is the helm the test passes helmfile (helmfile asks it its
// version first), read from go.mod without building it.
var helmVersion = sync.OnceValues(helmcli.Version)

// freshness says why the record of in is not usable ("" when it is), and
// the record when it is.
func freshness(src string, e entry, in string) (recordFile, string, error) {
	helm, err := helmVersion()
	if err != nil {
		return recordFile{}, "", err
	}
	sum, err := inputsSum(src, e, in)
	if err != nil {
		return recordFile{}, "", err
	}
	data, err := os.ReadFile(recordPath(e, in))
	if errors.Is(err, fs.ErrNotExist) {
		return recordFile{}, "missing", nil
	} else if err != nil {
		return recordFile{}, "", err
	}
	r, err := decodeRecord(data)
	switch {
	case err != nil:
		return r, fmt.Sprintf("unreadable: %v", err), nil
	case r.helmfile != helmfilecli.Version:
		return r, fmt.Sprintf("made by helmfile %s, the test runs %s", r.helmfile, helmfilecli.Version), nil
	case r.helm != helm:
		return r, fmt.Sprintf("made with helm %s, the test passes %s", r.helm, helm), nil
	case r.sum != sum:
		return r, "its inputs changed since (a file of the folder, its corpus.yaml entry, or the test's helmfile arguments or environment)", nil
	}
	return r, "", nil
}

// helmfileSource gives TestImportMatchesHelmfile helmfile's output for an
// input: its record when fresh, else the real helmfile's (built on first
// need), which -record writes down.
type helmfileSource struct {
	heldOut        bool // KHOOK_HELMFILE_CORPUS: always the real helmfile
	recorded, live int
	hfBin, helmBin string
	written        []string // records -record wrote, relative to recordsDir
}

func (s *helmfileSource) build(t *testing.T, src, root, in string, e entry) buildResult {
	t.Helper()
	if !s.heldOut && !*record {
		r, stale, err := freshness(src, e, in)
		if err != nil {
			t.Fatal(err)
		}
		if stale == "" {
			helm, err := helmcli.Path() // named, not built: helmfile does not run
			if err != nil {
				t.Fatal(err)
			}
			s.recorded++
			return r.result(root, helm)
		}
		t.Logf("the record of helmfile's output is not usable (%s): running helmfile %s", stale, helmfilecli.Version)
	}
	s.live++
	if s.hfBin == "" {
		s.hfBin, s.helmBin = helmfilecli.Binary(t), helmcli.Binary(t)
	}
	out, err := helmfileBuild(s.hfBin, s.helmBin, root, in, e)
	b := buildResult{out: out}
	if err != nil {
		b.refusal = err.Error()
	}
	if *record {
		s.write(t, src, root, in, e, b)
	}
	return b
}

// write records b and checks that the record reads back as b exactly.
func (s *helmfileSource) write(t *testing.T, src, root, in string, e entry, b buildResult) {
	t.Helper()
	helm, err := helmVersion()
	if err != nil {
		t.Fatal(err)
	}
	sum, err := inputsSum(src, e, in)
	if err != nil {
		t.Fatal(err)
	}
	body, refusal, err := toRecord(b, root, s.helmBin)
	if err != nil {
		t.Fatal(err)
	}
	rec := recordFile{helmfile: helmfilecli.Version, helm: helm, sum: sum, refusal: refusal, body: body}
	path := recordPath(e, in)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, rec.encode(e.Dir+"/"+in), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeRecord(data)
	if err != nil {
		t.Fatalf("the record %s just written does not read: %v", path, err)
	}
	if got := back.result(root, s.helmBin); !bytes.Equal(got.out, b.out) || got.refusal != b.refusal {
		t.Fatalf("the record %s does not read back as helmfile's output", path)
	}
	rel, _ := filepath.Rel(recordsDir, path)
	s.written = append(s.written, filepath.ToSlash(rel))
}

// removeOrphans deletes, after -record, the records of inputs corpus.yaml
// no longer has.
func (s *helmfileSource) removeOrphans(t *testing.T) {
	for _, rel := range orphans(t, s.written) {
		if err := os.Remove(filepath.Join(recordsDir, filepath.FromSlash(rel))); err != nil {
			t.Error(err)
		}
	}
}

// orphans are the files of recordsDir that are no record of an input in want.
func orphans(t *testing.T, want []string) []string {
	var out []string
	err := filepath.WalkDir(recordsDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(recordsDir, path)
		if rel = filepath.ToSlash(rel); !slices.Contains(want, rel) {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

// Every corpus input has a fresh record of helmfile's output: otherwise
// TestImportMatchesHelmfile runs the real helmfile for it, which a run
// from nothing first builds (about 1,300 CPU-seconds).
func TestHelmfileRecordsAreFresh(t *testing.T) {
	var problems, inputs []string
	for _, e := range loadCorpus(t) {
		for _, in := range e.Inputs {
			_, stale, err := freshness(filepath.Join(corpusDir, e.Dir), e, in)
			if err != nil {
				t.Fatal(err)
			}
			if stale != "" {
				problems = append(problems, fmt.Sprintf("%s: %s", recordPath(e, in), stale))
			}
			inputs = append(inputs, e.Dir+"/"+in)
		}
	}
	for _, rel := range orphans(t, inputs) {
		problems = append(problems, fmt.Sprintf("%s: no input of corpus.yaml", filepath.Join(recordsDir, rel)))
	}
	if len(problems) > 0 {
		t.Errorf("%d records of helmfile's output are stale, missing or left over; make them again with the real helmfile (it builds it first): %s\n%s",
			len(problems), recordCommand, strings.Join(problems, "\n"))
	}
}

// recordedInput is the input TestRecordMatchesLiveHelmfile runs helmfile
// on by default: the largest state of the corpus's home-ops family
// (bench_test.go).
var recordedInput = flag.String("live-input", largest, "the corpus input (DIR/INPUT) TestRecordMatchesLiveHelmfile runs the real helmfile on")

// The real helmfile prints, for an input, exactly what its record says
// (placeholders put back): the record round-trips. It needs the real
// helmfile, so it runs only when asked:
//
//	go test -count=1 ./test/helmfilecorpus -run TestRecordMatchesLiveHelmfile -live [-live-input DIR/INPUT]
func TestRecordMatchesLiveHelmfile(t *testing.T) {
	if !*live {
		t.Skip("runs the real helmfile (building it first): run it with -live")
	}
	dirName, in, _ := strings.Cut(*recordedInput, "/")
	i := slices.IndexFunc(loadCorpus(t), func(e entry) bool { return e.Dir == dirName })
	if i < 0 {
		t.Fatalf("-live-input %s: corpus.yaml has no folder %s", *recordedInput, dirName)
	}
	e := loadCorpus(t)[i]
	src := filepath.Join(corpusDir, e.Dir)
	r, stale, err := freshness(src, e, in)
	if err != nil {
		t.Fatal(err)
	}
	if stale != "" {
		t.Fatalf("the record %s is not fresh (%s): make it again first: %s", recordPath(e, in), stale, recordCommand)
	}
	root := copyEntry(t, src)
	helm := helmcli.Binary(t)
	out, err := helmfileBuild(helmfilecli.Binary(t), helm, root, in, e)
	got := buildResult{out: out}
	if err != nil {
		got.refusal = err.Error()
	}
	want := r.result(root, helm)
	if got.refusal != want.refusal {
		t.Errorf("helmfile refuses with %q, the record says %q", got.refusal, want.refusal)
	}
	if !bytes.Equal(got.out, want.out) {
		t.Errorf("helmfile prints other bytes than its record %s (%d bytes, the record %d): first difference at line %d", recordPath(e, in), len(got.out), len(want.out), firstDiffLine(got.out, want.out))
	}
	t.Logf("helmfile %s printed %d bytes for %s, byte for byte its record", helmfilecli.Version, len(got.out), *recordedInput)
}

var live = flag.Bool("live", false, "run TestRecordMatchesLiveHelmfile, which runs the real helmfile")

func firstDiffLine(a, b []byte) int {
	sa, sb := bufio.NewScanner(bytes.NewReader(a)), bufio.NewScanner(bytes.NewReader(b))
	for n := 1; ; n++ {
		ma, mb := sa.Scan(), sb.Scan()
		if !ma || !mb || sa.Text() != sb.Text() {
			return n
		}
	}
}
