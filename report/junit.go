package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

// JUnit XML as GitLab reads it (artifacts:reports:junit): one test suite per
// run, one test case per step.

// JUnitSuites is the document root.
type JUnitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one run of one spec.
type JUnitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []JUnitCase `xml:"testcase"`
}

// JUnitCase is one step.
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Time      string        `xml:"time,attr"`
	Failure   *JUnitMessage `xml:"failure,omitempty"`
	Skipped   *JUnitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// JUnitMessage is a failure or skip: a one-line message and the full text.
type JUnitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// JUnitOfResults turns a run into a suite: failed steps carry their error
// and pod log tail, skipped steps their reason.
func JUnitOfResults(r *model.Results, identifier string) JUnitSuites {
	suite := JUnitSuite{Name: suiteName(r.Command, r.Name, identifier)}
	if !r.StartedAt.IsZero() {
		suite.Timestamp = r.StartedAt.UTC().Format(time.RFC3339)
	}
	for _, s := range r.Steps {
		c := JUnitCase{Name: s.Name, Classname: suite.Name, File: s.Pos.File, Time: seconds(s.DurationMs)}
		switch s.Status {
		case model.StatusFailed:
			text := s.Error
			if tail := s.LogTailNotInError(); len(tail) > 0 {
				text += "\n\nlast pod log lines:\n" + strings.Join(tail, "\n")
			}
			text += s.Diagnosis.Text("\n\n")
			head, _, _ := strings.Cut(s.Error, "\n")
			if d := s.Diagnosis; d != nil && d.Reason != "" {
				head += ": " + d.Reason
			}
			c.Failure = &JUnitMessage{Message: head, Text: xmlSafe(text)}
			suite.Failures++
		case model.StatusSkipped:
			c.Skipped = &JUnitMessage{Message: xmlSafe(s.SkipReason)}
			suite.Skipped++
		default:
			c.SystemOut = xmlSafe(stepOutput(s))
		}
		c.Failure = safeMessage(c.Failure)
		suite.Cases = append(suite.Cases, c)
	}
	if r.Error != "" {
		// A run-level failure (cluster unreachable, state locked) is a case
		// of its own, so the report shows it even when no step ran.
		reason := r.FailureReason
		if reason == "" {
			reason = "failed"
		}
		suite.Cases = append(suite.Cases, JUnitCase{Name: r.Command, Classname: suite.Name, Time: "0",
			Failure: safeMessage(&JUnitMessage{Message: reason, Text: xmlSafe(r.Error)})})
		suite.Failures++
	}
	suite.Tests = len(suite.Cases)
	suite.Time = seconds(r.DurationMs)
	return wrapSuite(suite)
}

// JUnitOfPlan turns a plan into a suite. In drift mode a step that would
// change the cluster is a failure ("drifted"); otherwise every step passes
// and its predicted action is the test output.
func JUnitOfPlan(p *model.Plan, identifier string, drift bool) JUnitSuites {
	cmd := "plan"
	if drift {
		cmd = "drift"
	}
	suite := JUnitSuite{Name: suiteName(cmd, p.Name, identifier), Time: "0"}
	for _, s := range p.Steps {
		c := JUnitCase{Name: s.Name, Classname: suite.Name, File: s.Pos.File, Time: "0"}
		line := string(s.Action)
		if s.Summary != "" {
			line += ": " + s.Summary
		}
		if s.Reason != "" {
			line += " (" + s.Reason + ")"
		}
		switch {
		case drift && s.Drifted():
			msg := "drifted: would " + string(s.Action)
			if !model.IsChange(s.Action) {
				msg = "drifted: chart " + s.ChartMoved.Version + " re-published"
			}
			c.Failure = safeMessage(&JUnitMessage{Message: msg, Text: xmlSafe(line + "\n" + s.Diff)})
			suite.Failures++
		case s.Skip.Excluded():
			c.Skipped = &JUnitMessage{Message: xmlSafe(line)}
			suite.Skipped++
		default:
			c.SystemOut = xmlSafe(line)
		}
		suite.Cases = append(suite.Cases, c)
	}
	suite.Tests = len(suite.Cases)
	return wrapSuite(suite)
}

// JUnitOfProblems turns a validation failure into a suite with one failed
// case per problem, named after the field path.
func JUnitOfProblems(name, identifier string, ps spec.Problems) JUnitSuites {
	suite := JUnitSuite{Name: suiteName("validate", name, identifier), Time: "0"}
	sorted := append(spec.Problems(nil), ps...)
	sorted.Sort()
	for _, p := range sorted {
		caseName := p.Path
		if caseName == "" {
			caseName = p.Pos.String()
		}
		suite.Cases = append(suite.Cases, JUnitCase{Name: caseName, Classname: suite.Name, File: p.Pos.File, Time: "0",
			Failure: safeMessage(&JUnitMessage{Message: p.Message, Text: xmlSafe(p.String())})})
		suite.Failures++
	}
	if len(suite.Cases) == 0 {
		suite.Cases = append(suite.Cases, JUnitCase{Name: "spec is valid", Classname: suite.Name, Time: "0"})
	}
	suite.Tests = len(suite.Cases)
	return wrapSuite(suite)
}

// WriteJUnit writes the document with an XML header, in one Write.
func WriteJUnit(w io.Writer, doc JUnitSuites) error {
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("rendering the JUnit report: %w", err)
	}
	_, err = w.Write([]byte(xml.Header + string(b) + "\n"))
	return err
}

func wrapSuite(s JUnitSuite) JUnitSuites {
	return JUnitSuites{Name: "khook", Tests: s.Tests, Failures: s.Failures, Skipped: s.Skipped, Time: s.Time, Suites: []JUnitSuite{s}}
}

func suiteName(cmd, name, identifier string) string {
	n := "khook " + cmd + " " + name
	if identifier != "" && identifier != name {
		n += " [" + identifier + "]"
	}
	return n
}

func seconds(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }

func safeMessage(m *JUnitMessage) *JUnitMessage {
	if m == nil {
		return nil
	}
	m.Message = xmlSafe(m.Message)
	return m
}

// xmlSafe drops characters XML 1.0 cannot carry (control characters from
// pod logs), which encoding/xml would otherwise replace or refuse.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20, r == 0xFFFE, r == 0xFFFF:
			return -1
		}
		return r
	}, s)
}

// stepOutput is a passing step's JUnit output: its detail, then one line
// per object it touched ("created ConfigMap demo/settings").
func stepOutput(s model.StepResult) string {
	lines := []string{s.Detail}
	for _, c := range s.Changes {
		lines = append(lines, c.String())
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
