package report

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/model"
)

// fakeTerminal interprets the few ANSI sequences the live view uses (cursor
// up, clear line, carriage return, colours) into a screen of lines.
type fakeTerminal struct {
	t      *testing.T
	screen []string
	row    int
	writes int
	colour bool // an SGR sequence was seen
}

func (ft *fakeTerminal) Write(p []byte) (int, error) {
	ft.writes++
	s := string(p)
	for len(s) > 0 {
		switch {
		case strings.HasPrefix(s, "\x1b["):
			end := strings.IndexAny(s[2:], "ABCDHJKm")
			if end < 0 {
				ft.t.Fatalf("unterminated escape in %q", s)
			}
			arg, cmd := s[2:2+end], s[2+end]
			switch cmd {
			case 'A':
				n, _ := strconv.Atoi(arg)
				ft.row = max(0, ft.row-n)
			case 'K':
				ft.line("")
			case 'J':
				ft.screen = ft.screen[:min(ft.row+1, len(ft.screen))]
				ft.line("")
			case 'm':
				ft.colour = true
			default:
				ft.t.Fatalf("unexpected escape %q", s[:3+end])
			}
			s = s[3+end:]
		case s[0] == '\r':
			s = s[1:]
		case s[0] == '\n':
			ft.row++
			s = s[1:]
		default:
			i := strings.IndexAny(s, "\x1b\r\n")
			if i < 0 {
				i = len(s)
			}
			ft.line(ft.current() + s[:i])
			s = s[i:]
		}
	}
	return len(p), nil
}

func (ft *fakeTerminal) current() string {
	if ft.row < len(ft.screen) {
		return ft.screen[ft.row]
	}
	return ""
}

func (ft *fakeTerminal) line(text string) {
	for len(ft.screen) <= ft.row {
		ft.screen = append(ft.screen, "")
	}
	ft.screen[ft.row] = text
}

func (ft *fakeTerminal) String() string { return strings.Join(ft.screen, "\n") + "\n" }

func TestLiveView(t *testing.T) {
	ft := &fakeTerminal{t: t}
	now := t0
	v := NewFrameView(ft, sampleInfos(), FrameOptions{Width: 100, Now: func() time.Time { return now }})
	var frames strings.Builder
	frames.WriteString("--- initial\n" + ft.String())
	for _, ev := range runEvents() {
		now = ev.Time
		before := ft.writes
		v.Handle(ev)
		if ft.writes != before+1 {
			t.Errorf("event %s %s: %d writes, want one frame per write", ev.Kind, ev.Step, ft.writes-before)
		}
		fmt.Fprintf(&frames, "--- %s %s\n%s", ev.Kind, ev.Step, ft.String())
		if ev.Kind == model.EventStarted && ev.Step == "seed" && ev.Attempt == 2 {
			now = now.Add(12 * time.Second) // a tick moves the elapsed time of running steps
			v.Tick()
			fmt.Fprintf(&frames, "--- tick +12s\n%s", ft.String())
		}
	}
	if err := v.Finish(sampleResults()); err != nil {
		t.Fatal(err)
	}
	frames.WriteString("--- finish\n" + ft.String())
	if ft.colour {
		t.Error("colour escapes written with Color off (NO_COLOR)")
	}
	golden(t, "progress-live.txt", []byte(frames.String()))
}

// Log lines written through Above land above the frame, which is redrawn
// below them intact.
func TestLiveViewAbove(t *testing.T) {
	ft := &fakeTerminal{t: t}
	v := NewFrameView(ft, sampleInfos()[:2], FrameOptions{Width: 80, Now: func() time.Time { return t0 }})
	v.Handle(model.Event{Time: t0, Kind: model.EventStarted, Step: "cilium", Attempt: 1})
	if _, err := v.Above(ft, []byte("level=WARN msg=\"deprecated API\"\n")); err != nil {
		t.Fatal(err)
	}
	v.Handle(model.Event{Time: t0, Kind: model.EventStarted, Step: "seed", Attempt: 1})
	golden(t, "progress-live-above.txt", []byte(ft.String()))
}

func TestLiveViewColourAndWidth(t *testing.T) {
	ft := &fakeTerminal{t: t}
	v := NewFrameView(ft, []StepInfo{{Name: "a-step-with-a-long-name", Type: "helm"}}, FrameOptions{Color: true, Width: 30, Now: func() time.Time { return t0 }})
	v.Handle(model.Event{Time: t0, Kind: model.EventMessage, Step: "a-step-with-a-long-name", Message: "a message far too long to fit the terminal"})
	if !ft.colour {
		t.Error("no colour escapes with Color on")
	}
	if got := len([]rune(ft.screen[0])); got > 29 {
		t.Errorf("line is %d columns on a 30-column terminal: %q", got, ft.screen[0])
	}
}

// The frame cuts lines to the terminal width, so Finish prints every
// failed step's whole error below it.
func TestLiveViewFinishPrintsWholeErrors(t *testing.T) {
	ft := &fakeTerminal{t: t}
	v := NewFrameView(ft, []StepInfo{{Name: "never", Type: "wait"}}, FrameOptions{Width: 40, Now: func() time.Time { return t0 }})
	long := "timed out after 2s waiting for condition=Available on deployment/nope in live-demo"
	res := &model.Results{Name: "demo", Command: "apply", Status: model.RunFailed, Steps: []model.StepResult{{Name: "never", Type: "wait", Status: model.StatusFailed, Attempts: 1, Error: long}}}
	if err := v.Finish(res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ft.String(), "    "+long+"\n") {
		t.Errorf("whole error missing below the frame:\n%s", ft)
	}
}
