// Package english writes counts in the messages ddtsim prints: "1 file",
// "2 files", "3 directories".
package english

import (
	"strconv"
	"strings"
)

// Count returns n and noun, the noun in its plural unless n is 1: a final
// "y" becomes "ies" ("directories"), "ch" and "sh" take "es" ("batches"),
// other nouns "s". A noun with another plural ("indices") is not for it.
func Count[N ~int | ~int64 | ~uint64 | ~uint32](n N, noun string) string {
	num := strconv.FormatInt(int64(n), 10)
	if n >= 0 && uint64(n) > 1<<62 {
		num = strconv.FormatUint(uint64(n), 10)
	}
	if n == 1 {
		return num + " " + noun
	}
	switch {
	case strings.HasSuffix(noun, "y") && !strings.HasSuffix(noun, "ey") && !strings.HasSuffix(noun, "ay"):
		noun = noun[:len(noun)-1] + "ies"
	case strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "sh"):
		noun += "es"
	default:
		noun += "s"
	}
	return num + " " + noun
}
