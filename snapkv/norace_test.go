//go:build !race

package snapkv_test

const raceEnabled = false
