// Package rawargs keeps command-line arguments that are not valid UTF-8
// (file names may be any bytes) intact through a flag parser that rebuilds
// strings rune by rune, as kong does, turning such bytes into U+FFFD.
package rawargs

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// Raw maps the placeholders Protect put in the arguments to the original
// bytes.
type Raw map[string]string

// Protect swaps every argument that is not valid UTF-8 for a placeholder
// (NUL bytes cannot occur in a real argument; in --flag=value only the
// value is swapped) and returns the arguments to parse and what Restore
// needs to put the original bytes back.
func Protect(args []string) (safe []string, raw Raw) {
	safe = make([]string, len(args))
	for i, a := range args {
		if utf8.ValidString(a) {
			safe[i] = a
			continue
		}
		if raw == nil {
			raw = Raw{}
		}
		ph := fmt.Sprintf("\x00rawarg-%d\x00", i)
		raw[ph] = a
		if name, _, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "--") && utf8.ValidString(name) {
			// --flag=value: keep the flag name visible to the parser.
			ph = name + "=" + ph
			raw[ph[len(name)+1:]] = a[len(name)+1:]
		}
		safe[i] = ph
	}
	return safe, raw
}

// Restore replaces the placeholders in every exported string and []string
// field reachable from ptr (a pointer to the parsed command-line struct)
// with the original arguments.
func (raw Raw) Restore(ptr any) {
	if len(raw) > 0 {
		restore(reflect.ValueOf(ptr), raw)
	}
}

func restore(v reflect.Value, raw Raw) {
	switch v.Kind() {
	case reflect.Pointer:
		restore(v.Elem(), raw)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				restore(v.Field(i), raw)
			}
		}
	case reflect.String:
		if orig, ok := raw[v.String()]; ok {
			v.SetString(orig)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			restore(v.Index(i), raw)
		}
	}
}
