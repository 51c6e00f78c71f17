// Command testsummary runs `go test -json ...` and prints what plain
// `go test` prints (each package's ok/FAIL line, the output of failing
// tests), then every skipped test with its reason, so a run that tested
// less than it should says so, and when each long package ran, its slowest
// tests and the CPU time go test used, so a slow run says where its time
// went. It exits with go test's exit status.
//
//	testsummary go test -json -timeout 30m ./...
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testsummary go test -json [flags] [packages]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testsummary: %v\n", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "testsummary: starting %s: %v\n", os.Args[1], err)
		os.Exit(2)
	}
	s := newSummary(os.Stdout)
	s.started = time.Now()
	s.read(stdout)
	err = cmd.Wait()
	s.printSkipped()
	s.printTimeline()
	s.printSlowTests()
	if st := cmd.ProcessState; st != nil {
		// go test's own rusage counts every child it waited for: the
		// compiles, links and vet runs, the test binaries and what they
		// started (the control planes).
		fmt.Fprintf(s.w, "go test: %.0f s, %.0f CPU-s (%.0f user, %.0f system)\n", time.Since(s.started).Seconds(),
			(st.UserTime() + st.SystemTime()).Seconds(), st.UserTime().Seconds(), st.SystemTime().Seconds())
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		os.Exit(exit.ExitCode())
	case err != nil:
		fmt.Fprintf(os.Stderr, "testsummary: %s: %v\n", os.Args[1], err)
		os.Exit(2)
	}
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output events
	Time       time.Time
	Elapsed    float64 // seconds, on a package's pass, fail or skip
}

type key struct{ pkg, test string }

type skip struct{ pkg, test, reason string }

// summary holds each running test's output until the test ends: plain go
// test shows it only for a failure.
type summary struct {
	w       io.Writer
	pending map[key][]string
	order   []key
	skipped []skip
	started time.Time // when go test was started (zero in tests)
	first   time.Time // the first event: go test has started
	ran     []span
	tests   []slowTest
}

// slowTest is a top-level test that ran slowTest's threshold or more.
type slowTest struct {
	pkg, test string
	elapsed   time.Duration
}

// span is when one package's test binary ran, from go test's start.
type span struct {
	pkg        string
	start, end time.Duration
}

func newSummary(w io.Writer) *summary {
	return &summary{w: w, pending: map[key][]string{}}
}

func (s *summary) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		var ev event
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &ev) != nil {
			fmt.Fprintln(s.w, line) // not an event: pass it on as it is
			continue
		}
		s.event(ev)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(s.w, "testsummary: reading go test's output: %v\n", err)
	}
}

func (s *summary) event(ev event) {
	if s.first.IsZero() && !ev.Time.IsZero() {
		s.first = ev.Time
	}
	elapsed := time.Duration(ev.Elapsed * float64(time.Second))
	if ev.Test == "" && (ev.Action == "pass" || ev.Action == "fail") && !ev.Time.IsZero() {
		end := ev.Time.Sub(s.first)
		s.ran = append(s.ran, span{ev.Package, end - elapsed, end})
	}
	if ev.Test != "" && !strings.Contains(ev.Test, "/") && (ev.Action == "pass" || ev.Action == "fail") && elapsed >= slowTestTime {
		s.tests = append(s.tests, slowTest{ev.Package, ev.Test, elapsed})
	}
	switch {
	case ev.Action == "build-output":
		fmt.Fprint(s.w, ev.Output)
	case ev.Test == "" && ev.Action == "output":
		// The package's own lines (TestMain's, ok, FAIL, a panic): held
		// until the package ends, as plain go test does.
		k := key{pkg: ev.Package}
		s.pending[k] = append(s.pending[k], ev.Output)
	case ev.Test == "" && ev.Action == "fail":
		// A package that panicked or timed out: its running tests' output
		// is where the reason is, then everything the package printed.
		for _, k := range append([]key(nil), s.order...) {
			if k.pkg == ev.Package {
				s.flush(k)
			}
		}
		s.flush(key{pkg: ev.Package})
	case ev.Test == "" && (ev.Action == "pass" || ev.Action == "skip"):
		// Plain go test prints only the summary line of a package that
		// passed ("ok", or "?" for no test files).
		for _, l := range s.pending[key{pkg: ev.Package}] {
			if strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "?   ") {
				fmt.Fprint(s.w, l)
			}
		}
		delete(s.pending, key{pkg: ev.Package})
	case ev.Test == "":
	case ev.Action == "output":
		k := key{ev.Package, ev.Test}
		if _, ok := s.pending[k]; !ok {
			s.order = append(s.order, k)
		}
		s.pending[k] = append(s.pending[k], ev.Output)
	case ev.Action == "fail":
		s.flush(key{ev.Package, ev.Test})
	case ev.Action == "skip":
		k := key{ev.Package, ev.Test}
		s.skipped = append(s.skipped, skip{ev.Package, ev.Test, skipReason(s.pending[k])})
		s.drop(k)
	case ev.Action == "pass":
		s.drop(key{ev.Package, ev.Test})
	}
}

// flush prints a failed test's output as plain go test does (without -v's
// RUN/PAUSE/CONT markers).
func (s *summary) flush(k key) {
	for _, l := range s.pending[k] {
		if !marker.MatchString(l) {
			fmt.Fprint(s.w, l)
		}
	}
	s.drop(k)
}

func (s *summary) drop(k key) {
	delete(s.pending, k)
	for i, o := range s.order {
		if o == k {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

var (
	marker = regexp.MustCompile(`^=== (RUN|PAUSE|CONT|NAME)\s`)
	// logEntry starts a t.Log line: "    file_test.go:12: message".
	logEntry = regexp.MustCompile(`^\s+[^\s:]+\.go:\d+: `)
)

// skipReason is the last log entry of a skipped test (t.Skip's message, with
// its continuation lines); "no reason given" for a bare SkipNow.
func skipReason(lines []string) string {
	start := -1
	for i, l := range lines {
		if logEntry.MatchString(l) {
			start = i
		}
	}
	if start < 0 {
		return "no reason given"
	}
	var parts []string
	for _, l := range lines[start:] {
		if marker.MatchString(l) || strings.HasPrefix(strings.TrimSpace(l), "--- ") {
			break
		}
		parts = append(parts, strings.TrimSpace(l))
	}
	return strings.Join(parts, " ")
}

// longPackage is how long a package's tests must run to be on the timeline.
const longPackage = 20 * time.Second

// printTimeline lists the packages whose tests ran longPackage or more, in
// the order they ended: what a slow run waited for. A package starts once
// its test binary is built (and, for the cluster packages, once it is
// running, its control plane has been built too).
func (s *summary) printTimeline() {
	var long []span
	for _, r := range s.ran {
		if r.end-r.start >= longPackage {
			long = append(long, r)
		}
	}
	if len(long) == 0 {
		return
	}
	sort.SliceStable(long, func(i, j int) bool { return long[i].end < long[j].end })
	if !s.started.IsZero() {
		fmt.Fprintf(s.w, "go test's first event came %.0f s after it started (compiling, and the tools the first packages wait for)\n", s.first.Sub(s.started).Seconds())
	}
	fmt.Fprintf(s.w, "packages that ran %s or more (seconds after go test's first event):\n", longPackage)
	for _, r := range long {
		fmt.Fprintf(s.w, "  %5.0f to %5.0f (%4.0f)  %s\n", r.start.Seconds(), r.end.Seconds(), (r.end - r.start).Seconds(), r.pkg)
	}
}

// slowTestTime is how long a top-level test must run to be listed; at most
// slowTests are, the slowest first.
const (
	slowTestTime = 30 * time.Second
	slowTests    = 15
)

// printSlowTests lists the slowest top-level tests: where a long package's
// time went.
func (s *summary) printSlowTests() {
	if len(s.tests) == 0 {
		return
	}
	sort.SliceStable(s.tests, func(i, j int) bool { return s.tests[i].elapsed > s.tests[j].elapsed })
	fmt.Fprintf(s.w, "tests that ran %s or more (of %d, the %d slowest):\n", slowTestTime, len(s.tests), min(len(s.tests), slowTests))
	for _, t := range s.tests[:min(len(s.tests), slowTests)] {
		fmt.Fprintf(s.w, "  %5.0f  %s %s\n", t.elapsed.Seconds(), t.pkg, t.test)
	}
}

func (s *summary) printSkipped() {
	fmt.Fprintf(s.w, "skipped: %d\n", len(s.skipped))
	for _, sk := range s.skipped {
		fmt.Fprintf(s.w, "  %s %s: %s\n", sk.pkg, sk.test, sk.reason)
	}
}
