package iostreams

import "testing"

func TestColourAndRedraw(t *testing.T) {
	for _, tc := range []struct {
		name          string
		tty           bool
		env           []string
		colour, moves bool
	}{
		{"terminal", true, []string{"TERM=xterm"}, true, true},
		{"NO_COLOR", true, []string{"TERM=xterm", "NO_COLOR=1"}, false, true},
		{"TERM=dumb", true, []string{"TERM=dumb"}, false, false},
		{"piped", false, []string{"TERM=xterm"}, false, false},
		{"empty NO_COLOR is unset", true, []string{"NO_COLOR="}, true, true},
	} {
		ios, _, _ := Test("")
		ios.Environ = tc.env
		ios.SetTTY(tc.tty)
		if ios.ColorEnabled() != tc.colour || ios.CanRedraw() != tc.moves {
			t.Errorf("%s: colour %v redraw %v, want %v %v", tc.name, ios.ColorEnabled(), ios.CanRedraw(), tc.colour, tc.moves)
		}
	}
}
