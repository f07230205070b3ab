package main

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// File names need not be UTF-8, but kong rebuilds argument strings rune by
// rune, turning such bytes into U+FFFD. protectArgs swaps every argument
// that is not valid UTF-8 for a placeholder (NUL bytes cannot occur in a
// real argument) and restoreArgs puts the original bytes back into the
// parsed values.
func protectArgs(args []string) (safe []string, raw map[string]string) {
	safe = make([]string, len(args))
	for i, a := range args {
		if utf8.ValidString(a) {
			safe[i] = a
			continue
		}
		if raw == nil {
			raw = map[string]string{}
		}
		ph := fmt.Sprintf("\x00ddtsim-arg-%d\x00", i)
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

// restoreArgs replaces placeholders in every string and []string field
// reachable from v (a pointer to the parsed command-line struct).
func restoreArgs(v reflect.Value, raw map[string]string) {
	if len(raw) == 0 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		restoreArgs(v.Elem(), raw)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				restoreArgs(v.Field(i), raw)
			}
		}
	case reflect.String:
		if orig, ok := raw[v.String()]; ok {
			v.SetString(orig)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			restoreArgs(v.Index(i), raw)
		}
	}
}
