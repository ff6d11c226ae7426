package main

// The SnapKV layer benchmark (snapkv.go) times one layer's whole selection and, at the
// same shape, the Scores calls it makes; the report prints the Scores share of the
// layer for each variant. Sections of other names leave this row out.
func init() {
	shares = append(shares, sharePair{whole: "SnapKV layer Select C=1024 L=16384", part: "SnapKV layer scores only L=16384"})
}
