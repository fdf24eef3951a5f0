// Package infofmt formats the lines of INFO's sections ("name:value\r\n"),
// for the server and the feature packages that report their own section.
package infofmt

import "strconv"

// KV appends one INFO line.
func KV(b []byte, k, v string) []byte {
	b = append(b, k...)
	b = append(b, ':')
	b = append(b, v...)
	return append(b, "\r\n"...)
}

// KVI appends one INFO line with an integer value.
func KVI(b []byte, k string, v int64) []byte { return KV(b, k, strconv.FormatInt(v, 10)) }
