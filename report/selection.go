package report

import (
	"fmt"

	"github.com/khook/khook/model"
)

// selectionLine is a partial run's line for people: "partial run: 3 of 40
// steps (--target web); the others are not selected".
func selectionLine(s *model.Selection) string {
	return fmt.Sprintf("%s (%s); the others are not selected", s.Headline(), s.Flags())
}
