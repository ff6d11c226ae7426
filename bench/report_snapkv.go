package main

import "strings"

// The SnapKV layer benchmark (snapkv.go) times one layer's whole selection, "SnapKV
// layer Select C=… L=…", the same on the same data token-major, "SnapKV layer Select
// token-major C=… L=…", and the Scores calls each makes at the same prompt length,
// "SnapKV layer scores only [token-major ]L=…"; the report prints the Scores share of
// each.
func init() {
	shares = append(shares, func(whole string) (string, bool) {
		rest, ok := strings.CutPrefix(whole, "SnapKV layer Select ")
		if !ok {
			return "", false
		}
		layout := ""
		if strings.HasPrefix(rest, "token-major ") {
			layout = "token-major "
		}
		f := strings.Fields(rest)
		return "SnapKV layer scores only " + layout + f[len(f)-1], true
	})
}
