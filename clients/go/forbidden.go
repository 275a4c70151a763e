package leasehold

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// forbids reports whether the message of an X 7 names exactly key (PROTOCOL.md 9.1): it is
// `forbidden key "<key>"` with the key as the server prints it, and neither the key was cut for
// printing (a cut key could name another key too) nor the message for the 200-byte limit.
func forbids(message, key string) bool {
	printed, whole := printableKey(key)
	expected := "forbidden key " + printed
	return whole && len(expected) <= maxErrorMessage && message == expected
}

// printableKey is the key as the server's messages quote it (the Java Keys.printable): UTF-8 text
// with control characters as \uXXXX and \ and " escaped, any other bytes as ASCII with \xHH; cut
// after 80 characters (counted as Java counts them, in UTF-16 units). whole is false when cut.
func printableKey(key string) (printed string, whole bool) {
	var out strings.Builder
	out.WriteByte('"')
	n := 1 // the length of out in UTF-16 units
	if !utf8.ValidString(key) {
		for i := 0; i < len(key); i++ {
			if n > 80 {
				return "", false
			}
			c := key[i]
			if c >= 0x20 && c < 0x7F && c != '\\' && c != '"' {
				out.WriteByte(c)
				n++
			} else {
				fmt.Fprintf(&out, "\\x%02X", c)
				n += 4
			}
		}
		out.WriteByte('"')
		return out.String(), true
	}
	for _, c := range key {
		// Java checks the length before each UTF-16 unit: a pair is cut when its second half is
		if n > 80 || (c >= 0x10000 && n+1 > 80) {
			return "", false
		}
		switch {
		case c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0) || c == '\u2028' || c == '\u2029':
			fmt.Fprintf(&out, "\\u%04X", c)
			n += 6
		case c == '\\' || c == '"':
			out.WriteByte('\\')
			out.WriteRune(c)
			n += 2
		case c >= 0x10000:
			out.WriteRune(c)
			n += 2
		default:
			out.WriteRune(c)
			n++
		}
	}
	out.WriteByte('"')
	return out.String(), true
}
