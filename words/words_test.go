package words

import "testing"

func TestWords(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{OneLine("a\n  b\tc \n"), "a b c"},
		{Plural(1, "step", "steps"), "step"},
		{Plural(0, "step", "steps"), "steps"},
		{Count(1, "object", "objects"), "1 object"},
		{Count(2, "object", "objects"), "2 objects"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
