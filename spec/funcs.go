package spec

import (
	"errors"
	"fmt"
	"strings"
	"text/template"
	"unicode"

	"github.com/Masterminds/sprig/v3"
)

// excludedFuncs are removed from sprig's hermetic map: plan and apply must
// render the same spec from the same inputs, offline, in bounded time and
// memory. sprig.HermeticTxtFuncMap already drops env, expandenv, now, date,
// dateInZone, dateModify, htmlDate*, rand*, randBytes, uuidv4, getHostByName.
var excludedFuncs = []string{
	// Read the clock (ago, and durationRound given a time) or the local
	// time zone (toDate parses in time.Local); without them no time value
	// can be made, so the formatting helpers go too.
	"ago", "toDate", "mustToDate", "unixEpoch", "durationRound",
	"date_in_zone", "date_modify", "must_date_modify", "mustDateModify",
	// Nondeterministic: random order or random numbers.
	"shuffle", "randInt",
	// Random salts, keys or IVs: a new output on every run.
	"bcrypt", "htpasswd", "genPrivateKey", "genCA", "genCAWithKey",
	"genSelfSignedCert", "genSelfSignedCertWithKey", "genSignedCert",
	"genSignedCertWithKey", "encryptAES",
	// Deterministic, but scrypt costs ~32 MiB and tens of milliseconds a call:
	// a spec could make loading arbitrarily slow and large.
	"derivePassword",
	// Results depend on the operating system khook runs on; base, dir,
	// clean, ext and isAbs are the portable forms.
	"osBase", "osClean", "osDir", "osExt", "osIsAbs",
}

// maxPipelineOutput bounds one pipeline's result.
const maxPipelineOutput = 1 << 20

// maxRepeat bounds counts given to functions that allocate in proportion.
const maxRepeat = 1 << 16

var errTooLarge = errors.New("result too large")

// pipelineFuncs is the function map of ${NAME|pipeline}.
func pipelineFuncs() template.FuncMap {
	fm := sprig.HermeticTxtFuncMap()
	for _, name := range excludedFuncs {
		delete(fm, name)
	}
	// Bounded versions of the functions whose output size is an argument.
	fm["repeat"] = func(n int, s string) (string, error) {
		if n < 0 || n > maxRepeat || n*len(s) > maxPipelineOutput {
			return "", fmt.Errorf("repeat %d: %w", n, errTooLarge)
		}
		return strings.Repeat(s, n), nil
	}
	indent := fm["indent"].(func(int, string) string)
	checkIndent := func(n int, s string) error {
		if n < 0 || n > maxRepeat || n*(strings.Count(s, "\n")+1)+len(s) > maxPipelineOutput {
			return fmt.Errorf("indent %d: %w", n, errTooLarge)
		}
		return nil
	}
	fm["indent"] = func(n int, s string) (string, error) {
		if err := checkIndent(n, s); err != nil {
			return "", err
		}
		return indent(n, s), nil
	}
	fm["nindent"] = func(n int, s string) (string, error) {
		if err := checkIndent(n, s); err != nil {
			return "", err
		}
		return "\n" + indent(n, s), nil
	}
	until := fm["until"].(func(int) []int)
	fm["until"] = func(n int) ([]int, error) {
		if n > maxRepeat || n < -maxRepeat {
			return nil, fmt.Errorf("until %d: %w", n, errTooLarge)
		}
		return until(n), nil
	}
	untilStep := fm["untilStep"].(func(int, int, int) []int)
	fm["untilStep"] = func(start, stop, step int) ([]int, error) {
		if step == 0 || (stop-start)/step > maxRepeat {
			return nil, fmt.Errorf("untilStep: %w", errTooLarge)
		}
		return untilStep(start, stop, step), nil
	}
	seq := fm["seq"].(func(...int) string)
	fm["seq"] = func(p ...int) (string, error) {
		for _, n := range p {
			if n > maxRepeat || n < -maxRepeat {
				return "", fmt.Errorf("seq: %w", errTooLarge)
			}
		}
		return seq(p...), nil
	}
	fm["printf"] = func(format string, args ...any) (string, error) {
		if err := checkFormatWidths(format); err != nil {
			return "", err
		}
		return fmt.Sprintf(format, args...), nil
	}
	return fm
}

// checkFormatWidths refuses printf widths/precisions that would allocate
// huge strings ("%999999999d") and the "*" forms that take them from args.
func checkFormatWidths(format string) error {
	digits := 0
	for _, c := range format {
		switch {
		case c == '*':
			return errors.New("printf: '*' widths are not supported")
		case unicode.IsDigit(c):
			digits++
			if digits > 4 {
				return fmt.Errorf("printf: width or precision: %w", errTooLarge)
			}
		default:
			digits = 0
		}
	}
	return nil
}

// pipelines evaluates ${NAME|pipeline} text, caching parsed templates: large
// specs repeat the same pipeline many times.
type pipelines struct {
	funcs template.FuncMap
	cache map[string]*template.Template
	errs  map[string]error
}

func newPipelines() *pipelines {
	return &pipelines{funcs: pipelineFuncs(), cache: map[string]*template.Template{}, errs: map[string]error{}}
}

// run applies the pipeline to value, which is passed as data ("."), never
// parsed as a template.
func (p *pipelines) run(pipeline, value string) (string, error) {
	t, err := p.parse(pipeline)
	if err != nil {
		return "", err
	}
	w := &limitedBuilder{max: maxPipelineOutput}
	if err := t.Execute(w, value); err != nil {
		if errors.Is(err, errTooLarge) {
			return "", fmt.Errorf("%q: result too large (a pipeline's output is limited to %d MiB)", pipeline, maxPipelineOutput>>20)
		}
		return "", fmt.Errorf("%q: %s", pipeline, cleanTemplateError(err))
	}
	return w.String(), nil
}

func (p *pipelines) parse(pipeline string) (*template.Template, error) {
	if t, ok := p.cache[pipeline]; ok {
		return t, nil
	}
	if err, ok := p.errs[pipeline]; ok {
		return nil, err
	}
	// "}}" would close the action early and let the rest run as template text.
	if strings.Contains(pipeline, "{{") || strings.Contains(pipeline, "}}") {
		err := fmt.Errorf("%q: a pipeline cannot contain {{ or }}", pipeline)
		p.errs[pipeline] = err
		return nil, err
	}
	t, err := template.New("pipeline").Funcs(p.funcs).Option("missingkey=error").Parse("{{ . | " + pipeline + " }}")
	if err != nil {
		err = fmt.Errorf("%q: %s", pipeline, cleanTemplateError(err))
		p.errs[pipeline] = err
		return nil, err
	}
	p.cache[pipeline] = t
	return t, nil
}

// cleanTemplateError drops text/template's "template: pipeline:1:7: " prefix,
// whose columns refer to the generated template, not the spec.
func cleanTemplateError(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "template: ")
	if strings.HasPrefix(s, "pipeline:") {
		if i := strings.Index(s, ": "); i >= 0 {
			s = s[i+2:]
		}
	}
	return s
}

type limitedBuilder struct {
	strings.Builder
	max int
}

func (l *limitedBuilder) Write(p []byte) (int, error) {
	if l.Len()+len(p) > l.max {
		return 0, errTooLarge
	}
	return l.Builder.Write(p)
}
