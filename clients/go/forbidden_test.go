package leasehold

import (
	"strings"
	"testing"
)

// The X 7 message names a key as the server prints it (Java Keys.printable); an Acquire is
// Forbidden only when the message names exactly its key, never a cut one (PROTOCOL.md 9.1).
func TestForbidsMatchesOnlyTheExactKeyAsTheServerPrintsIt(t *testing.T) {
	long80 := strings.Repeat("k", 80) // the longest key printed whole
	cases := []struct {
		message, key string
		want         bool
	}{
		{`forbidden key "billing/x"`, "billing/x", true},
		{`forbidden key "billing/x"`, "billing/y", false},
		{`forbidden key "billing/x"`, "billing/x2", false},
		{`forbidden`, "billing/x", false},
		{`forbidden key "a\"b\\c"`, `a"b\c`, true},
		{`forbidden key "tab\u0009x"`, "tab\tx", true},
		{`forbidden key "\xFF\x00a"`, "\xff\x00a", true},
		{`forbidden key "é/ü"`, "é/ü", true},
		{`forbidden key "` + long80 + `"`, long80, true},
		{`forbidden key "` + long80 + `..."`, long80 + "kk", false}, // cut: could be another key
	}
	for _, c := range cases {
		if got := forbids(c.message, c.key); got != c.want {
			t.Errorf("forbids(%q, %q) = %v, want %v", c.message, c.key, got, c.want)
		}
	}
}

func TestPrintableKeyCutsAfter80CharactersCountedAsJavaDoes(t *testing.T) {
	if _, whole := printableKey(strings.Repeat("k", 80)); !whole {
		t.Error("an 80-character key is whole (the quote and 80 characters, then nothing left to check)")
	}
	if _, whole := printableKey(strings.Repeat("k", 81)); whole {
		t.Error("an 81-character key is cut")
	}
	// a character outside the BMP is two UTF-16 units: at 79+1 units its second half is cut
	if _, whole := printableKey(strings.Repeat("k", 79) + "😀"); whole {
		t.Error("a surrogate pair from unit 80 on is cut")
	}
	if p, whole := printableKey(strings.Repeat("k", 78) + "😀"); !whole || !strings.HasSuffix(p, "😀\"") {
		t.Errorf("a surrogate pair ending at unit 80 is whole, got %q %v", p, whole)
	}
}
